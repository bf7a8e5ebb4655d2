// cachefit workload for tinyxml2: parse, walk and print an XML file N times.
#include "tinyxml2.h"
#include <cstdio>
#include <cstdlib>
#include <string>
using namespace tinyxml2;

static long walk(const XMLElement* e) {
    long n = 0;
    for (; e; e = e->NextSiblingElement()) {
        ++n;
        for (const XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) n += a->Name()[0] != 0;
        if (e->Attribute("id")) ++n;
        n += walk(e->FirstChildElement());
    }
    return n;
}

int main(int argc, char** argv) {
    const char* path = argc > 1 ? argv[1] : "resources/dream.xml";
    int iters = argc > 2 ? atoi(argv[2]) : 3;
    FILE* f = fopen(path, "rb");
    if (!f) { perror(path); return 1; }
    std::string buf;
    char tmp[65536];
    size_t k;
    while ((k = fread(tmp, 1, sizeof tmp, f)) > 0) buf.append(tmp, k);
    fclose(f);
    long total = 0, bytes = 0;
    for (int i = 0; i < iters; ++i) {
        XMLDocument doc;
        if (doc.Parse(buf.data(), buf.size()) != XML_SUCCESS) { fprintf(stderr, "parse error %s\n", doc.ErrorStr()); return 1; }
        total += walk(doc.FirstChildElement());
        XMLPrinter printer;
        doc.Print(&printer);
        bytes += printer.CStrSize();
    }
    printf("elements+attrs %ld printed bytes %ld\n", total, bytes);
    return 0;
}
