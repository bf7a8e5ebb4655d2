#include "dbimpl.h"
Options::Options() : block_size(4096), write_buffer(4 << 20) {}
DB::~DB() {}
