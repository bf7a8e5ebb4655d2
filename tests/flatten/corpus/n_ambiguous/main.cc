// Precondition 4: two bases declare a function of the same name; lookup needs a qualifier.
struct reader {
    int get() const { return 1; }
};
struct writer {
    int get() const { return 2; }
};
struct port : reader, writer {
    int both() const { return reader::get() + writer::get(); }
};
int main() {
    port p;
    return p.both();
}
