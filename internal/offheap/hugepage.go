package offheap

// HugePage is the alignment of MapHuge's memory: the size of an x86-64 or
// arm64 huge page.
const HugePage = 2 << 20
