package imageshard

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzReader checks that NewReader never panics, that its errors name the
// file, and that every item of a file it accepts reads or fails with an
// error naming the file and the item.
func FuzzReader(f *testing.F) {
	good := encode(f, testMeta(), testItems())
	f.Add(good)
	f.Add(encode(f, Meta{Source: "cifar10", Split: "test", Channels: 3, Classes: []string{"x"}}, nil))
	bad := bytes.Clone(good)
	bad[headerSize] ^= 1
	f.Add(bad)
	f.Add(good[:len(good)-5])
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(bytes.NewReader(b), int64(len(b)), "f.shard")
		if err != nil {
			if !strings.Contains(err.Error(), "f.shard") {
				t.Fatalf("error without the file's name: %v", err)
			}
			return
		}
		for i := range r.Len() {
			rec := r.Record(i)
			if err := checkRecord(rec, r.Meta()); err != nil {
				t.Fatalf("accepted item %d: %v", i, err)
			}
			got, err := r.Read(i, nil)
			if err != nil {
				if !strings.Contains(err.Error(), "f.shard: item ") {
					t.Fatalf("item %d: %v", i, err)
				}
				continue
			}
			if len(got) != rec.Length {
				t.Fatalf("item %d: %d bytes, record says %d", i, len(got), rec.Length)
			}
		}
	})
}
