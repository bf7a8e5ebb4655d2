#include <cstdio>
#include <cstring>

#include "dbimpl.h"

DBImpl g_spare(nullptr);  // an object in static storage, found in the DWARF

int main(int argc, char** argv) {
  DBImpl* db = new DBImpl(nullptr);
  if (argc > 1 && std::strcmp(argv[1], "layout") == 0) {
    db->PrintLayout();
  } else {
    long sum = 0;
    for (long k = 0; k < 10; k++) sum += db->Get(k);
    std::printf("%ld\n", sum);
  }
  delete db;
  return 0;
}
