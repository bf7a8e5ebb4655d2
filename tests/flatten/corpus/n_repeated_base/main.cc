// Precondition 3: a non-virtual base reached twice would duplicate its data members.
struct counter {
    int n = 0;
};
struct a : counter {};
struct b : counter {};
struct ab : a, b {
    int total() const { return a::n + b::n; }
};
int main() {
    ab x;
    return x.total();
}
