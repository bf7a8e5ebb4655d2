#include "dbimpl.h"

#include <cstdio>

DBImpl::DBImpl(Env* env) : env_(env), dbname_("db"), mem_(new MemTable{0}), imm_(nullptr),
                           gets_(0) {}
DBImpl::~DBImpl() { delete mem_; }

long DBImpl::Get(long key) {
  MemTable* m = mem_;
  long found = m->hits + key;
  if (imm_ != nullptr) found += imm_->hits;
  gets_ = gets_ + 1;
  return found;
}

#define SHOW(m) std::printf("%s %ld %zu\n", #m, \
    (long)(reinterpret_cast<const char*>(&m) - reinterpret_cast<const char*>(this)), sizeof(m))

// Each member's offset and size as the compiler laid them out: the tests' reference.
void DBImpl::PrintLayout() const {
  std::printf("sizeof %zu\n", sizeof(*this));
  SHOW(env_); SHOW(options_); SHOW(mu_); SHOW(bg_cv_); SHOW(dbname_); SHOW(mem_); SHOW(imm_);
  SHOW(gets_);
}
