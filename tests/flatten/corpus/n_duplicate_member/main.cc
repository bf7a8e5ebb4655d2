// Precondition 3: two bases declare a data member of the same name.
struct left {
    int count = 1;
};
struct right {
    int count = 2;
};
struct both : left, right {
    int sum() const { return left::count + right::count; }
};
int main() {
    both b;
    return b.sum();
}
