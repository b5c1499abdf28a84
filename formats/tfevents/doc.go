// Package tfevents writes and reads TensorBoard event files
// (events.out.tfevents.*): the scalars and text a training run shows in
// TensorBoard.
//
// An event file is a sequence of TFRecords, each
//
//	8 bytes  uint64 little-endian: the length n of the data
//	4 bytes  uint32 little-endian: masked CRC-32C of the 8 length bytes
//	n bytes  the data: one serialised tensorboard.Event protobuf
//	4 bytes  uint32 little-endian: masked CRC-32C of the data
//
// where the mask of a CRC-32C (Castagnoli) c is ((c>>15)|(c<<17)) +
// 0xa282ead8. The first record is the event whose file_version is
// "brain.Event:2"; each later one holds a Summary at a step.
//
// Events are encoded with protowire, with the field numbers of
// TensorBoard's tensorboard/compat/proto/event.proto and summary.proto:
//
//	Event            wall_time 1 (double), step 2 (int64), file_version 3 (string), summary 5
//	Summary          value 1 (repeated Value)
//	Summary.Value    tag 1, simple_value 2 (float), tensor 8 (TensorProto), metadata 9
//	SummaryMetadata  plugin_data 1 (plugin_name 1, content 2), data_class 4
//	TensorProto      dtype 1 (DT_STRING = 7), tensor_shape 2, string_val 8
//
// A scalar is a Value with simple_value, which TensorBoard shows in its
// Scalars tab; a text is a rank-0 DT_STRING tensor with the "text"
// plugin's metadata, shown in its Text tab as Markdown.
//
// Reading is bounded by the input: a length is checked against the bytes
// that remain before anything is allocated for it. A file that ends inside
// a record (a writer killed during a write) yields the records before it
// and the offset of the partial one, as TensorBoard stops at such a
// record; a record whose checksum is wrong is an error naming its offset.
package tfevents
