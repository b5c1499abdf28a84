package tfevents

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// headerSize is a record's length and its checksum; footerSize the data's
// checksum.
const (
	headerSize = 12
	footerSize = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC is the masked CRC-32C that TFRecords store.
func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return ((c >> 15) | (c << 17)) + 0xa282ead8
}

// AppendRecord appends data, framed as one TFRecord, to dst.
func AppendRecord(dst, data []byte) []byte {
	var length [8]byte
	binary.LittleEndian.PutUint64(length[:], uint64(len(data)))
	dst = append(dst, length[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, maskedCRC(length[:]))
	dst = append(dst, data...)
	return binary.LittleEndian.AppendUint32(dst, maskedCRC(data))
}

// Record is one record of a TFRecord file.
type Record struct {
	Offset int64  // of its first byte in the file
	Data   []byte // its data (aliasing the input)
}

// Size is the number of bytes the record takes in the file.
func (r Record) Size() int64 { return headerSize + int64(len(r.Data)) + footerSize }

// CorruptError is a record whose checksum does not match.
type CorruptError struct {
	Offset int64  // of the record
	Field  string // "length" or "data"
	Stored uint32 // the masked CRC-32C in the file
	Actual uint32 // the masked CRC-32C of the bytes
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("record at offset %d: the %s checksum is %#08x, the %s's bytes give %#08x", e.Offset, e.Field, e.Stored, e.Field, e.Actual)
}

// SplitRecords splits the content of a TFRecord file into its records.
// When b ends inside a record, the records before it are returned with
// partial set to the offset of that record (-1 when b ends after a whole
// record); a wrong checksum is a *CorruptError.
func SplitRecords(b []byte) (records []Record, partial int64, err error) {
	off := 0
	for off < len(b) {
		rest := b[off:]
		if len(rest) < headerSize {
			return records, int64(off), nil
		}
		if stored, actual := binary.LittleEndian.Uint32(rest[8:12]), maskedCRC(rest[:8]); stored != actual {
			return nil, -1, &CorruptError{Offset: int64(off), Field: "length", Stored: stored, Actual: actual}
		}
		n := binary.LittleEndian.Uint64(rest[:8])
		if len(rest) < headerSize+footerSize || n > uint64(len(rest)-headerSize-footerSize) {
			return records, int64(off), nil
		}
		data := rest[headerSize : headerSize+int(n)]
		if stored, actual := binary.LittleEndian.Uint32(rest[headerSize+int(n):]), maskedCRC(data); stored != actual {
			return nil, -1, &CorruptError{Offset: int64(off), Field: "data", Stored: stored, Actual: actual}
		}
		records = append(records, Record{Offset: int64(off), Data: data})
		off += headerSize + int(n) + footerSize
	}
	return records, -1, nil
}
