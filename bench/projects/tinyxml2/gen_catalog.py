"""Writes catalog.xml, the attribute-rich input of the tinyxml2 workload (3,000 books)."""

import random

random.seed(7)
LANGS = ["en", "fr", "de", "it"]
out = ['<?xml version="1.0"?>', '<catalog xmlns:x="urn:x" version="2">']
for i in range(3000):
    lang = random.choice(LANGS)
    year = 1900 + random.randrange(120)
    available = random.choice(["true", "false"])
    out.append(f'  <book id="bk{i}" lang="{lang}" year="{year}" available="{available}">')
    out.append(f'    <title short="t{i}">Title number {i}</title>')
    for a in range(random.randrange(1, 4)):
        out.append(f'    <author first="A{a}" last="L{i}"/>')
    out.append(f'    <price currency="EUR">{random.randrange(100, 9999) / 100}</price>')
    out.append(f'    <!-- note {i} -->')
    out.append('  </book>')
out.append('</catalog>')
with open("catalog.xml", "w") as fh:
    fh.write("\n".join(out) + "\n")
