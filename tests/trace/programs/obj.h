/* The traced type of the C test programs: a@0 (4), pad@4, b@8 (8), c@16 (1); 24 bytes. */
#ifndef OBJ_H
#define OBJ_H
struct obj {
    int a;
    int pad;
    long b;
    char c;
};
#endif
