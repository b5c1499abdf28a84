package tfevents

import (
	"fmt"
	"math"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// FileVersion is the file_version of an event file's first event.
const FileVersion = "brain.Event:2"

// TextPlugin is the plugin_name of a text summary's metadata.
const TextPlugin = "text"

// Field numbers of TensorBoard's protobuf messages (event.proto,
// summary.proto, tensor.proto).
const (
	eventWallTime    protowire.Number = 1
	eventStep        protowire.Number = 2
	eventFileVersion protowire.Number = 3
	eventSummary     protowire.Number = 5

	summaryValue protowire.Number = 1

	valueTag         protowire.Number = 1
	valueSimpleValue protowire.Number = 2
	valueTensor      protowire.Number = 8
	valueMetadata    protowire.Number = 9

	metadataPluginData protowire.Number = 1
	metadataDataClass  protowire.Number = 4
	pluginName         protowire.Number = 1

	tensorDtype     protowire.Number = 1
	tensorShape     protowire.Number = 2
	tensorStringVal protowire.Number = 8

	dtString        = 7 // DataType DT_STRING
	dataClassTensor = 2 // DataClass DATA_CLASS_TENSOR
)

// Kind is what a Value holds.
type Kind int

const (
	// Other is a value this package does not interpret (an image, a
	// histogram, a tensor of another plugin); reading keeps only its tag.
	Other Kind = iota
	// Scalar is a simple_value.
	Scalar
	// Text is a string tensor of the text plugin.
	Text
)

// Value is one tagged value of an event's summary.
type Value struct {
	Tag    string
	Kind   Kind
	Scalar float32 // when Kind is Scalar
	Text   string  // when Kind is Text
}

// ScalarValue is the scalar v under tag (rounded to float32, as
// TensorBoard's simple_value stores it).
func ScalarValue(tag string, v float64) Value {
	return Value{Tag: tag, Kind: Scalar, Scalar: float32(v)}
}

// TextValue is the text s under tag; TensorBoard renders it as Markdown.
func TextValue(tag, s string) Value { return Value{Tag: tag, Kind: Text, Text: s} }

// Event is a tensorboard.Event: either a file's first event (FileVersion
// set, no values) or a summary of values at a step.
type Event struct {
	WallTime    float64 // seconds since the Unix epoch
	Step        int64
	FileVersion string
	Values      []Value
}

// Marshal encodes e as a tensorboard.Event protobuf. Strings must be valid
// UTF-8 (protobuf's string fields are).
func (e Event) Marshal() ([]byte, error) {
	var b []byte
	if e.WallTime != 0 {
		b = protowire.AppendTag(b, eventWallTime, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(e.WallTime))
	}
	if e.Step != 0 {
		b = protowire.AppendTag(b, eventStep, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(e.Step))
	}
	if e.FileVersion != "" {
		if len(e.Values) > 0 {
			return nil, fmt.Errorf("tfevents: an event has a file_version and %d values: it holds one or the other", len(e.Values))
		}
		b = protowire.AppendTag(b, eventFileVersion, protowire.BytesType)
		return protowire.AppendString(b, e.FileVersion), nil
	}
	var summary []byte
	for _, v := range e.Values {
		m, err := v.marshal()
		if err != nil {
			return nil, err
		}
		summary = protowire.AppendTag(summary, summaryValue, protowire.BytesType)
		summary = protowire.AppendBytes(summary, m)
	}
	b = protowire.AppendTag(b, eventSummary, protowire.BytesType)
	return protowire.AppendBytes(b, summary), nil
}

// marshal encodes a Summary.Value.
func (v Value) marshal() ([]byte, error) {
	if !utf8.ValidString(v.Tag) {
		return nil, fmt.Errorf("tfevents: tag %q is not valid UTF-8", v.Tag)
	}
	b := protowire.AppendTag(nil, valueTag, protowire.BytesType)
	b = protowire.AppendString(b, v.Tag)
	switch v.Kind {
	case Scalar:
		b = protowire.AppendTag(b, valueSimpleValue, protowire.Fixed32Type)
		return protowire.AppendFixed32(b, math.Float32bits(v.Scalar)), nil
	case Text:
		// A rank-0 string tensor: an empty tensor_shape.
		var tensor []byte
		tensor = protowire.AppendTag(tensor, tensorDtype, protowire.VarintType)
		tensor = protowire.AppendVarint(tensor, dtString)
		tensor = protowire.AppendTag(tensor, tensorShape, protowire.BytesType)
		tensor = protowire.AppendBytes(tensor, nil)
		tensor = protowire.AppendTag(tensor, tensorStringVal, protowire.BytesType)
		tensor = protowire.AppendString(tensor, v.Text)
		var plugin []byte
		plugin = protowire.AppendTag(plugin, pluginName, protowire.BytesType)
		plugin = protowire.AppendString(plugin, TextPlugin)
		var meta []byte
		meta = protowire.AppendTag(meta, metadataPluginData, protowire.BytesType)
		meta = protowire.AppendBytes(meta, plugin)
		meta = protowire.AppendTag(meta, metadataDataClass, protowire.VarintType)
		meta = protowire.AppendVarint(meta, dataClassTensor)
		b = protowire.AppendTag(b, valueTensor, protowire.BytesType)
		b = protowire.AppendBytes(b, tensor)
		b = protowire.AppendTag(b, valueMetadata, protowire.BytesType)
		return protowire.AppendBytes(b, meta), nil
	}
	return nil, fmt.Errorf("tfevents: value %q: kind %d cannot be written", v.Tag, v.Kind)
}

// UnmarshalEvent decodes a tensorboard.Event. Fields this package does not
// interpret are skipped; a field of the wrong wire type, or a truncated
// one, is an error naming the field.
func UnmarshalEvent(b []byte) (Event, error) {
	var e Event
	err := eachField(b, "Event", func(num protowire.Number, typ protowire.Type, field []byte, n uint64) error {
		switch num {
		case eventWallTime:
			if typ != protowire.Fixed64Type {
				return wireTypeError("Event.wall_time", typ)
			}
			e.WallTime = math.Float64frombits(n)
		case eventStep:
			if typ != protowire.VarintType {
				return wireTypeError("Event.step", typ)
			}
			e.Step = int64(n)
		case eventFileVersion:
			if typ != protowire.BytesType {
				return wireTypeError("Event.file_version", typ)
			}
			e.FileVersion = string(field)
		case eventSummary:
			if typ != protowire.BytesType {
				return wireTypeError("Event.summary", typ)
			}
			return eachField(field, "Summary", func(num protowire.Number, typ protowire.Type, field []byte, _ uint64) error {
				if num != summaryValue {
					return nil
				}
				if typ != protowire.BytesType {
					return wireTypeError("Summary.value", typ)
				}
				v, err := unmarshalValue(field)
				e.Values = append(e.Values, v)
				return err
			})
		}
		return nil
	})
	return e, err
}

// unmarshalValue decodes a Summary.Value.
func unmarshalValue(b []byte) (Value, error) {
	var v Value
	var tensor *Value // a string tensor, a Text when the plugin is "text"
	plugin := ""
	err := eachField(b, "Summary.Value", func(num protowire.Number, typ protowire.Type, field []byte, n uint64) error {
		switch num {
		case valueTag:
			if typ != protowire.BytesType {
				return wireTypeError("Summary.Value.tag", typ)
			}
			v.Tag = string(field)
		case valueSimpleValue:
			if typ != protowire.Fixed32Type {
				return wireTypeError("Summary.Value.simple_value", typ)
			}
			v.Kind, v.Scalar = Scalar, math.Float32frombits(uint32(n))
		case valueTensor:
			if typ != protowire.BytesType {
				return wireTypeError("Summary.Value.tensor", typ)
			}
			s, ok, err := unmarshalStringScalar(field)
			if err != nil {
				return err
			}
			if ok {
				tensor = &Value{Kind: Text, Text: s}
			}
		case valueMetadata:
			if typ != protowire.BytesType {
				return wireTypeError("Summary.Value.metadata", typ)
			}
			var err error
			plugin, err = unmarshalPluginName(field)
			return err
		}
		return nil
	})
	if tensor != nil && plugin == TextPlugin && v.Kind == Other {
		v.Kind, v.Text = Text, tensor.Text
	}
	return v, err
}

// unmarshalStringScalar decodes a TensorProto, reporting whether it is a
// DT_STRING tensor of one string.
func unmarshalStringScalar(b []byte) (s string, ok bool, err error) {
	dtype, strings := uint64(0), 0
	err = eachField(b, "TensorProto", func(num protowire.Number, typ protowire.Type, field []byte, n uint64) error {
		switch num {
		case tensorDtype:
			if typ != protowire.VarintType {
				return wireTypeError("TensorProto.dtype", typ)
			}
			dtype = n
		case tensorStringVal:
			if typ != protowire.BytesType {
				return wireTypeError("TensorProto.string_val", typ)
			}
			s = string(field)
			strings++
		}
		return nil
	})
	return s, err == nil && dtype == dtString && strings == 1, err
}

// unmarshalPluginName decodes a SummaryMetadata's plugin_data.plugin_name.
func unmarshalPluginName(b []byte) (name string, err error) {
	err = eachField(b, "SummaryMetadata", func(num protowire.Number, typ protowire.Type, field []byte, _ uint64) error {
		if num != metadataPluginData {
			return nil
		}
		if typ != protowire.BytesType {
			return wireTypeError("SummaryMetadata.plugin_data", typ)
		}
		return eachField(field, "PluginData", func(num protowire.Number, typ protowire.Type, field []byte, _ uint64) error {
			if num != pluginName {
				return nil
			}
			if typ != protowire.BytesType {
				return wireTypeError("PluginData.plugin_name", typ)
			}
			name = string(field)
			return nil
		})
	})
	return name, err
}

// eachField calls f on each field of the message b: its number, wire
// type, and its bytes (BytesType) or number (VarintType, Fixed32Type,
// Fixed64Type). Groups are skipped.
func eachField(b []byte, message string, f func(num protowire.Number, typ protowire.Type, field []byte, n uint64) error) error {
	for len(b) > 0 {
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 {
			return fmt.Errorf("tfevents: %s: a field tag: %w", message, protowire.ParseError(k))
		}
		b = b[k:]
		var field []byte
		var n uint64
		switch typ {
		case protowire.VarintType:
			n, k = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var v uint32
			v, k = protowire.ConsumeFixed32(b)
			n = uint64(v)
		case protowire.Fixed64Type:
			n, k = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			field, k = protowire.ConsumeBytes(b)
		default:
			k = protowire.ConsumeFieldValue(num, typ, b)
		}
		if k < 0 {
			return fmt.Errorf("tfevents: %s field %d: %w", message, num, protowire.ParseError(k))
		}
		b = b[k:]
		if typ == protowire.StartGroupType {
			continue
		}
		if err := f(num, typ, field, n); err != nil {
			return err
		}
	}
	return nil
}

func wireTypeError(field string, typ protowire.Type) error {
	return fmt.Errorf("tfevents: %s has wire type %d, not the type of its field", field, typ)
}
