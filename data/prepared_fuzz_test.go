package data

import (
	"bytes"
	"image"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/formats/imageshard"
)

// FuzzPreparedItem stores arbitrary bytes as a prepared JPEG item of a
// given size and channel count: Item never panics, and either returns an
// image of the recorded size or an error naming the file and the item.
func FuzzPreparedItem(f *testing.F) {
	f.Add(encodeJPEG(patternRGBA(5, 3)), uint8(3), uint8(5), true)
	f.Add(encodeJPEG(image.NewGray(image.Rect(0, 0, 4, 4))), uint8(4), uint8(4), false)
	f.Add(encodeJPEG(patternRGBA(5, 3)), uint8(3), uint8(4), true)
	f.Add([]byte{0xff, 0xd8, 0xff}, uint8(1), uint8(1), false)
	f.Fuzz(func(t *testing.T, b []byte, h, w uint8, rgb bool) {
		if len(b) == 0 || h == 0 || w == 0 {
			return
		}
		channels := 1
		if rgb {
			channels = 3
		}
		const path = "f.shard"
		var file bytes.Buffer
		sw, err := imageshard.NewWriter(&file, imageshard.Meta{Source: "imagefolder", Split: "train", Channels: channels, Classes: []string{"a"}, Quality: 90})
		if err == nil {
			err = sw.Add(b, 0, int(h), int(w), imageshard.JPEG)
		}
		if err == nil {
			err = sw.Finish()
		}
		if err != nil {
			t.Fatal(err)
		}
		r, err := imageshard.NewReader(bytes.NewReader(file.Bytes()), int64(file.Len()), path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := newPrepared(r, 0)
		if err != nil {
			t.Fatal(err)
		}
		img, _, err := p.Item(0)
		if err != nil {
			if !strings.Contains(err.Error(), path+": item 0") {
				t.Fatalf("error without the file and item: %v", err)
			}
			return
		}
		if img.C != channels || img.H != int(h) || img.W != int(w) || img.Valid() != nil {
			t.Fatalf("(%d, %d, %d) image, want (%d, %d, %d)", img.C, img.H, img.W, channels, h, w)
		}
	})
}
