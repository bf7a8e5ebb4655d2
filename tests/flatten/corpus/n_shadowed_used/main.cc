// Precondition 3: a data member shadows a base member that base code still uses.
struct base {
    int level = 1;
    int base_level() const { return level; }
};
struct derived : base {
    int level = 2;
};
int main() {
    derived d;
    return d.base_level() + d.level;
}
