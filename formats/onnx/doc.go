// Package onnx writes ONNX models: the ModelProto of onnx/onnx.proto
// (proto2), encoded with protowire from the field numbers of that file.
//
// It covers the subset an inference graph of dense float tensors needs:
//
//	ModelProto          ir_version 1, producer_name 2, producer_version 3,
//	                    doc_string 6, graph 7, opset_import 8, metadata_props 14
//	OperatorSetIdProto  domain 1, version 2
//	StringStringEntry   key 1, value 2
//	GraphProto          node 1, name 2, initializer 5, doc_string 10,
//	                    input 11, output 12
//	NodeProto           input 1, output 2, name 3, op_type 4, attribute 5
//	AttributeProto      name 1, f 2, i 3, s 4, t 5, floats 7, ints 8, type 20
//	TensorProto         dims 1, data_type 2, name 8, raw_data 9,
//	                    external_data 13, data_location 14
//	ValueInfoProto      name 1, type 2
//	TypeProto           tensor_type 1; TypeProto.Tensor elem_type 1, shape 2
//	TensorShapeProto    dim 1; Dimension dim_value 1, dim_param 2
//
// Tensor data is written as raw_data (little-endian), or, for a model over
// protobuf's 2 GiB limit, in a separate file that the tensors' external_data
// entries point into (location, offset, length), as onnx.save_model with
// save_as_external_data does. Write checks the graph before encoding it:
// every node input is a graph input, an initializer or the output of an
// earlier node, names are unique, tensors hold as many values as their
// dimensions say, and every graph output is computed.
package onnx
