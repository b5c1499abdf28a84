package tfevents

import (
	"math"
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestEventRoundTrip(t *testing.T) {
	for _, e := range []Event{
		{WallTime: 1700000000.25, FileVersion: FileVersion},
		{WallTime: 1.5, Step: 42, Values: []Value{ScalarValue("steps/loss", 2.25), ScalarValue("steps/lr", 1e-3), ScalarValue("nan", math.Inf(1))}},
		{WallTime: 2, Step: -3, Values: []Value{TextValue("config", "model:\n  name: vit\n")}},
		{WallTime: 3, Step: 1 << 40, Values: []Value{TextValue("empty", "")}},
	} {
		b, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalEvent(b)
		if err != nil {
			t.Fatalf("%+v: %v", e, err)
		}
		if !reflect.DeepEqual(got, e) {
			t.Fatalf("decoded %+v, want %+v", got, e)
		}
	}
}

// TestEventWire checks the encoding field by field against the numbers of
// TensorBoard's event.proto and summary.proto.
func TestEventWire(t *testing.T) {
	b, err := Event{WallTime: 0.5, Step: 7, Values: []Value{ScalarValue("a", 1.5)}}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	want = protowire.AppendTag(want, 1, protowire.Fixed64Type)
	want = protowire.AppendFixed64(want, math.Float64bits(0.5))
	want = protowire.AppendTag(want, 2, protowire.VarintType)
	want = protowire.AppendVarint(want, 7)
	var value []byte
	value = protowire.AppendTag(value, 1, protowire.BytesType)
	value = protowire.AppendString(value, "a")
	value = protowire.AppendTag(value, 2, protowire.Fixed32Type)
	value = protowire.AppendFixed32(value, math.Float32bits(1.5))
	var summary []byte
	summary = protowire.AppendTag(summary, 1, protowire.BytesType)
	summary = protowire.AppendBytes(summary, value)
	want = protowire.AppendTag(want, 5, protowire.BytesType)
	want = protowire.AppendBytes(want, summary)
	if !reflect.DeepEqual(b, want) {
		t.Fatalf("encoded % x\nwant    % x", b, want)
	}

	fv, _ := Event{FileVersion: FileVersion}.Marshal()
	if want := append([]byte{3<<3 | 2, byte(len(FileVersion))}, FileVersion...); !reflect.DeepEqual(fv, want) {
		t.Fatalf("file-version event % x, want % x", fv, want)
	}
}

func TestUnmarshalSkipsUnknownFields(t *testing.T) {
	b, _ := Event{Step: 5, Values: []Value{ScalarValue("x", 2)}}.Marshal()
	// A graph_def (field 4), a source_metadata (10) and a varint field 99.
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte{1, 2, 3})
	b = protowire.AppendTag(b, 10, protowire.BytesType)
	b = protowire.AppendBytes(b, nil)
	b = protowire.AppendTag(b, 99, protowire.VarintType)
	b = protowire.AppendVarint(b, 300)
	e, err := UnmarshalEvent(b)
	if err != nil || e.Step != 5 || len(e.Values) != 1 || e.Values[0].Scalar != 2 {
		t.Fatalf("%+v, %v", e, err)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	wrongStep := protowire.AppendTag(nil, 2, protowire.BytesType)
	wrongStep = protowire.AppendBytes(wrongStep, []byte("7"))
	truncated, _ := Event{Step: 5, Values: []Value{ScalarValue("x", 2)}}.Marshal()
	truncated = truncated[:len(truncated)-2]
	for name, b := range map[string][]byte{"step as bytes": wrongStep, "truncated": truncated, "bad tag": {0x80}} {
		if _, err := UnmarshalEvent(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestMarshalRefuses(t *testing.T) {
	if _, err := (Event{FileVersion: FileVersion, Values: []Value{ScalarValue("a", 1)}}).Marshal(); err == nil {
		t.Error("file_version with values: no error")
	}
	if _, err := (Event{Values: []Value{ScalarValue("\xff", 1)}}).Marshal(); err == nil {
		t.Error("a tag that is not UTF-8: no error")
	}
	if _, err := (Event{Values: []Value{{Tag: "a", Kind: Other}}}).Marshal(); err == nil {
		t.Error("a value of kind Other: no error")
	}
}
