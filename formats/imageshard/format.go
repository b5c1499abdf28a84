package imageshard

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Encoding is how an item's pixels are stored.
type Encoding uint8

const (
	// Raw is uint8 pixels, planar (C, H, W): channels·height·width bytes.
	Raw Encoding = 1
	// JPEG is a baseline JPEG file (grey for one channel, YCbCr for three).
	JPEG Encoding = 2
)

// String returns "raw" or "jpeg".
func (e Encoding) String() string {
	switch e {
	case Raw:
		return "raw"
	case JPEG:
		return "jpeg"
	}
	return fmt.Sprintf("Encoding(%d)", uint8(e))
}

// ParseEncoding returns the Encoding named "raw" or "jpeg".
func ParseEncoding(s string) (Encoding, error) {
	switch s {
	case "raw":
		return Raw, nil
	case "jpeg":
		return JPEG, nil
	}
	return 0, fmt.Errorf("imageshard: encoding %q: want raw or jpeg", s)
}

// Meta describes a file's images as a whole.
type Meta struct {
	// Source names the data set the images were prepared from, as
	// train's data.dataset does (imagefolder, cifar10, …).
	Source string `json:"source"`
	// Split is "train" or "test".
	Split string `json:"split"`
	// Channels is the channel count of every image: 1 (grey) or 3 (RGB).
	Channels int `json:"channels"`
	// Classes are the class names, indexed by label.
	Classes []string `json:"classes"`
	// MaxSide bounds the longer side of every image (0: kept as it was).
	MaxSide int `json:"max_side"`
	// Quality is the JPEG quality the JPEG items were encoded with (0: none).
	Quality int `json:"quality"`
}

// Record is an item's index entry.
type Record struct {
	Offset        int64    // where the item's bytes start in the file
	Length        int      // how many bytes it has
	Label         int      // its class, in [0, len(Meta.Classes))
	Height, Width int      // its size in pixels
	Encoding      Encoding // how its pixels are stored
	CRC           uint32   // CRC-32C of its bytes
}

const (
	version     = 1
	headerSize  = 16
	recordSize  = 32
	trailerSize = 32
	// MaxSide is the largest height or width a record may have (JPEG's).
	MaxSide = 65535
	// maxMeta bounds the meta block (class names).
	maxMeta = 64 << 20
)

var (
	headerMagic  = [8]byte{'V', 'T', 'I', 'M', 'G', 'S', 'H', 'D'}
	trailerMagic = [8]byte{'V', 'T', 'S', 'H', 'D', 'E', 'N', 'D'}
	castagnoli   = crc32.MakeTable(crc32.Castagnoli)
)

func header() []byte {
	b := make([]byte, headerSize)
	copy(b, headerMagic[:])
	binary.LittleEndian.PutUint32(b[8:], version)
	return b
}

func (r Record) appendTo(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(r.Offset))
	b = binary.LittleEndian.AppendUint32(b, uint32(r.Length))
	b = binary.LittleEndian.AppendUint32(b, uint32(r.Label))
	b = binary.LittleEndian.AppendUint32(b, uint32(r.Height))
	b = binary.LittleEndian.AppendUint32(b, uint32(r.Width))
	b = binary.LittleEndian.AppendUint32(b, r.CRC)
	return append(b, byte(r.Encoding), 0, 0, 0)
}

// decodeRecord reads a record without checking it; reserved bytes other
// than 0 are reported.
func decodeRecord(b []byte) (Record, error) {
	le := binary.LittleEndian
	r := Record{
		Offset:   int64(le.Uint64(b)),
		Length:   int(le.Uint32(b[8:])),
		Label:    int(le.Uint32(b[12:])),
		Height:   int(le.Uint32(b[16:])),
		Width:    int(le.Uint32(b[20:])),
		CRC:      le.Uint32(b[24:]),
		Encoding: Encoding(b[28]),
	}
	if b[29]|b[30]|b[31] != 0 {
		return r, fmt.Errorf("reserved bytes %x, want 0", b[29:32])
	}
	if r.Offset < 0 {
		return r, fmt.Errorf("offset %d", uint64(r.Offset))
	}
	return r, nil
}

// trailer is the fixed-size end of a file.
type trailer struct {
	indexOffset int64
	count       int64
	metaLength  int64
	crc         uint32
}

func (t trailer) bytes() []byte {
	b := make([]byte, 0, trailerSize)
	b = binary.LittleEndian.AppendUint64(b, uint64(t.indexOffset))
	b = binary.LittleEndian.AppendUint64(b, uint64(t.count))
	b = binary.LittleEndian.AppendUint32(b, uint32(t.metaLength))
	b = binary.LittleEndian.AppendUint32(b, t.crc)
	return append(b, trailerMagic[:]...)
}

// checkMeta reports a Meta the format cannot hold.
func checkMeta(m Meta) error {
	switch {
	case m.Channels != 1 && m.Channels != 3:
		return fmt.Errorf("channels = %d: want 1 or 3", m.Channels)
	case len(m.Classes) == 0:
		return fmt.Errorf("classes: none")
	case m.MaxSide < 0 || m.MaxSide > MaxSide:
		return fmt.Errorf("max_side = %d: want 0…%d", m.MaxSide, MaxSide)
	case m.Quality < 0 || m.Quality > 100:
		return fmt.Errorf("quality = %d: want 0…100", m.Quality)
	}
	return nil
}

// checkRecord reports a record that does not fit m; the item's offset is
// checked by the caller.
func checkRecord(r Record, m Meta) error {
	switch {
	case r.Encoding != Raw && r.Encoding != JPEG:
		return fmt.Errorf("encoding = %d: want 1 (raw) or 2 (jpeg)", uint8(r.Encoding))
	case r.Height < 1 || r.Height > MaxSide || r.Width < 1 || r.Width > MaxSide:
		return fmt.Errorf("height × width = %d × %d: want 1…%d each", r.Height, r.Width, MaxSide)
	case m.MaxSide > 0 && max(r.Height, r.Width) > m.MaxSide:
		return fmt.Errorf("height × width = %d × %d: longer than max_side %d", r.Height, r.Width, m.MaxSide)
	case r.Label < 0 || r.Label >= len(m.Classes):
		return fmt.Errorf("label = %d: want 0…%d", r.Label, len(m.Classes)-1)
	case r.Encoding == Raw && r.Length != m.Channels*r.Height*r.Width:
		return fmt.Errorf("length = %d: a raw %d × %d × %d image has %d bytes", r.Length, m.Channels, r.Height, r.Width, m.Channels*r.Height*r.Width)
	case r.Length < 1:
		return fmt.Errorf("length = 0")
	}
	return nil
}
