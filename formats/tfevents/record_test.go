package tfevents

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

func TestMaskedCRC(t *testing.T) {
	// CRC-32C of "123456789" is the catalogue's check value 0xe3069283.
	c := crc32.Checksum([]byte("123456789"), castagnoli)
	if c != 0xe3069283 {
		t.Fatalf("CRC-32C check value %#x, want 0xe3069283", c)
	}
	want := ((c >> 15) | (c << 17)) + 0xa282ead8
	if got := maskedCRC([]byte("123456789")); got != want {
		t.Fatalf("masked %#x, want %#x", got, want)
	}
}

func TestAppendRecordLayout(t *testing.T) {
	data := []byte("abc")
	r := AppendRecord(nil, data)
	if len(r) != 12+3+4 {
		t.Fatalf("record of %d bytes, want 19", len(r))
	}
	if n := binary.LittleEndian.Uint64(r[:8]); n != 3 {
		t.Fatalf("length %d, want 3", n)
	}
	if got, want := binary.LittleEndian.Uint32(r[8:12]), maskedCRC(r[:8]); got != want {
		t.Fatalf("length checksum %#x, want %#x", got, want)
	}
	if !bytes.Equal(r[12:15], data) {
		t.Fatalf("data %q", r[12:15])
	}
	if got, want := binary.LittleEndian.Uint32(r[15:]), maskedCRC(data); got != want {
		t.Fatalf("data checksum %#x, want %#x", got, want)
	}
}

func TestSplitRecordsPartial(t *testing.T) {
	var b []byte
	b = AppendRecord(b, []byte("first"))
	b = AppendRecord(b, []byte(""))
	whole := len(b)
	b = AppendRecord(b, []byte("third record"))
	for cut := whole; cut < len(b); cut++ {
		recs, partial, err := SplitRecords(b[:cut])
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		wantPartial := int64(whole)
		if cut == whole {
			wantPartial = -1
		}
		if len(recs) != 2 || partial != wantPartial {
			t.Fatalf("cut at %d: %d records, partial %d; want 2, %d", cut, len(recs), partial, wantPartial)
		}
		if string(recs[0].Data) != "first" || len(recs[1].Data) != 0 || recs[1].Offset != 12+5+4 {
			t.Fatalf("cut at %d: records %+v", cut, recs)
		}
	}
	recs, partial, err := SplitRecords(b)
	if err != nil || len(recs) != 3 || partial != -1 || string(recs[2].Data) != "third record" {
		t.Fatalf("whole file: %d records, partial %d, %v", len(recs), partial, err)
	}
}

func TestSplitRecordsCorrupt(t *testing.T) {
	b := AppendRecord(AppendRecord(nil, []byte("first")), []byte("second"))
	second := int64(12 + 5 + 4)
	for _, c := range []struct {
		name  string
		at    int
		field string
	}{
		{"a length byte", int(second), "length"},
		{"a length checksum byte", int(second) + 9, "length"},
		{"a data byte", int(second) + 13, "data"},
		{"a data checksum byte", len(b) - 1, "data"},
	} {
		bad := bytes.Clone(b)
		bad[c.at] ^= 0x40
		_, _, err := SplitRecords(bad)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Offset != second || ce.Field != c.field {
			t.Errorf("%s flipped: %v, want a %s checksum error at offset %d", c.name, err, c.field, second)
		}
	}
}
