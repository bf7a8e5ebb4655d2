// A leveldb-like C++ class for the DWARF tests: an interface base with a vtable, pointer
// and const members, a member whose class is defined (with its constructor) in another
// unit, and std members whose classes live in libstdc++ (no debug information there).
#include <condition_variable>
#include <mutex>
#include <string>

struct Env;
struct MemTable { long hits; };

struct Options {
  Options();          // defined in dbimpl_opts.cc: clang's constructor homing puts the
  int block_size;     // class's definition in that unit's debug information only
  long write_buffer;
};

class DB {
 public:
  virtual ~DB();
  virtual long Get(long key) = 0;
};

class DBImpl : public DB {
 public:
  explicit DBImpl(Env* env);
  ~DBImpl() override;
  long Get(long key) override;
  void PrintLayout() const;

 private:
  Env* const env_;
  const Options options_;
  std::mutex mu_;
  std::condition_variable bg_cv_;
  std::string dbname_;
  MemTable* mem_;
  MemTable* imm_;
  long gets_;
};
