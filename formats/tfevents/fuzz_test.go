package tfevents

import (
	"bytes"
	"math"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzParse feeds event files, whole, cut or damaged, to Parse: it must
// not panic, and what it accepts must frame again to the same bytes up to
// the partial record, with each event surviving Marshal and UnmarshalEvent.
func FuzzParse(f *testing.F) {
	var file []byte
	for _, e := range []Event{
		{WallTime: 1, FileVersion: FileVersion},
		{WallTime: 2, Step: 3, Values: []Value{ScalarValue("steps/loss", 0.5), ScalarValue("steps/lr", 1e-4)}},
		{WallTime: 3, Step: 3, Values: []Value{TextValue("config", "epochs: 5\n")}},
	} {
		b, err := e.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		file = AppendRecord(file, b)
	}
	f.Add(file)
	f.Add(file[:len(file)-5])
	f.Add([]byte{})
	f.Add(AppendRecord(nil, []byte{0x12, 0x01}))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b)
		if err != nil {
			return
		}
		end := int64(len(b))
		if p.Partial >= 0 {
			end = p.Partial
		}
		var again []byte
		for _, r := range p.Records {
			again = AppendRecord(again, r.Data)
		}
		if !bytes.Equal(again, b[:end]) {
			t.Fatalf("records frame again to %d bytes, the input's whole records are %d", len(again), end)
		}
		for i, e := range p.Events {
			if !writable(e) {
				continue
			}
			m, err := e.Marshal()
			if err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
			back, err := UnmarshalEvent(m)
			if err != nil {
				t.Fatalf("event %d re-encoded: %v", i, err)
			}
			if !sameEvent(back, e) {
				t.Fatalf("event %d: %+v became %+v", i, e, back)
			}
		}
	})
}

// FuzzUnmarshalEvent decodes arbitrary protobuf bytes as an Event.
func FuzzUnmarshalEvent(f *testing.F) {
	b, _ := Event{WallTime: 2, Step: 3, Values: []Value{ScalarValue("a", 1), TextValue("t", "x")}}.Marshal()
	f.Add(b)
	f.Add([]byte{0x1a, 0x03, 'a', 'b', 'c'})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := UnmarshalEvent(b)
		if err != nil || !writable(e) {
			return
		}
		m, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := UnmarshalEvent(m)
		if err != nil || !sameEvent(back, e) {
			t.Fatalf("%+v became %+v, %v", e, back, err)
		}
	})
}

// writable reports whether Marshal takes e: values of known kinds with
// UTF-8 tags, and a file version only without values.
func writable(e Event) bool {
	if e.FileVersion != "" && len(e.Values) > 0 {
		return false
	}
	for _, v := range e.Values {
		if v.Kind == Other || !utf8.ValidString(v.Tag) {
			return false
		}
	}
	return true
}

// sameEvent compares events, NaN scalars and wall times bit for bit.
func sameEvent(a, b Event) bool {
	if math.Float64bits(a.WallTime) != math.Float64bits(b.WallTime) && !(a.WallTime == 0 && b.WallTime == 0) {
		return false
	}
	if a.Step != b.Step || a.FileVersion != b.FileVersion || len(a.Values) != len(b.Values) {
		return false
	}
	for i := range a.Values {
		va, vb := a.Values[i], b.Values[i]
		if math.Float32bits(va.Scalar) != math.Float32bits(vb.Scalar) {
			return false
		}
		va.Scalar, vb.Scalar = 0, 0
		if !reflect.DeepEqual(va, vb) {
			return false
		}
	}
	return true
}
