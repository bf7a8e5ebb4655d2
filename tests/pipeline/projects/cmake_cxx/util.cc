// util.cc - no node here: the wrapper compiles this unit unchanged.
long checksum(long a, long b) {
    unsigned long h = 1469598103934665603ul;
    const long values[] = {a, b};
    for (long v : values) {
        h ^= static_cast<unsigned long>(v);
        h *= 1099511628211ul;
    }
    return static_cast<long>(h >> 1);
}
