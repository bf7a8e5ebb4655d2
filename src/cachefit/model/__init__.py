"""The record-layout model shared by every stage (see record_layout)."""

from cachefit.model.record_layout import Base, Field, Record, SourceExtent, UnnamedBitfield

__all__ = ["Base", "Field", "Record", "SourceExtent", "UnnamedBitfield"]
