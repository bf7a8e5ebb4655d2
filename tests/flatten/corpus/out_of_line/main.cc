#include "parts.h"

int engine::built = 0;

class car : public engine, public wheels<car> {
public:
    car();
    int power() const override;
    void drive();
};

car::car() : engine(90) { set(4); }
int car::power() const { return engine::power() * 2; }
void car::drive() {
    start();
    printf("driving on %d wheels, built=%d\n", count(), built);
}

int main() {
    car c;
    c.drive();
    return 0;
}
