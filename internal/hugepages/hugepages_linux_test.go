package hugepages

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestMakeAdvisesHugePages checks that Make marks the whole huge pages
// inside a large buffer for huge pages (Linux's "hg" flag on their
// mapping in /proc/self/smaps) and leaves the pages around them as they
// were.
func TestMakeAdvisesHugePages(t *testing.T) {
	s := Make[float32](3 * Size / 4) // three huge pages' worth: two whole ones inside
	start := uintptr(unsafe.Pointer(&s[0]))
	first := (start + Size - 1) &^ (Size - 1)
	if !advised(t, first) || !advised(t, first+Size) {
		t.Errorf("the huge pages at %#x inside a buffer of %d bytes at %#x are not marked for huge pages", first, 3*Size, start)
	}
	if first > start && advised(t, start) {
		t.Errorf("the buffer's first bytes at %#x, before its first whole huge page at %#x, are marked too", start, first)
	}
}

// advised reports whether the mapping holding address addr has the "hg"
// flag (MADV_HUGEPAGE).
func advised(t *testing.T, addr uintptr) bool {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	inside := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			inside = lo <= addr && addr < hi
			continue
		}
		if inside && strings.HasPrefix(line, "VmFlags:") {
			return strings.Contains(line+" ", " hg ")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("no mapping in /proc/self/smaps holds %#x", addr)
	return false
}
