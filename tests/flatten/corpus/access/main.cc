// Access specifiers: protected and private members, protected and private inheritance,
// class vs struct defaults. A member keeps its access in the flat class.
#include <cstdio>

class account {
public:
    account(int b) : balance(b) {}
    int get() const { return balance; }

protected:
    void add(int v) { balance += v; audit(); }
    int ops = 0;

private:
    void audit() { ++ops; }
    int balance;
};

class limits {
protected:
    int limit = 500;
    bool over(int v) const { return v > limit; }
};

struct history {
    int last = 0;
    void note(int v) { last = v; }
};

class savings : public account, protected limits, private history {
public:
    savings() : account(100) {}
    bool deposit(int v) {
        if (over(v)) return false;
        add(v);
        note(v);
        return true;
    }
    int operations() const { return ops; }
    int last_deposit() const { return last; }
};

int main() {
    savings s;
    printf("%d\n", s.deposit(50));
    printf("%d\n", s.deposit(900));
    printf("%d\n", s.deposit(25));
    printf("balance=%d ops=%d last=%d\n", s.get(), s.operations(), s.last_deposit());
    return 0;
}
