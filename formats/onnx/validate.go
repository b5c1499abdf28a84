package onnx

import (
	"errors"
	"fmt"
)

// Validate checks what Write relies on and ONNX requires of a graph: an
// opset, unique value names, nodes in topological order (every input a
// graph input, an initializer or an earlier node's output), tensors whose
// values fill their dimensions, known attribute types, every graph output
// computed, and distinct metadata keys. The error names the node, tensor,
// value or key.
func (m *Model) Validate() error {
	if m.Opset < 1 {
		return fmt.Errorf("onnx: model opset %d, want ≥ 1", m.Opset)
	}
	keys := map[string]bool{}
	for _, p := range m.Metadata {
		if keys[p.Key] {
			return fmt.Errorf("onnx: metadata key %q appears twice", p.Key)
		}
		keys[p.Key] = true
	}
	return m.Graph.validate()
}

func (g *Graph) validate() error {
	defined := map[string]string{} // value name → what defines it
	define := func(name, by string) error {
		if name == "" {
			return fmt.Errorf("onnx: graph %q: %s has an empty name", g.Name, by)
		}
		if prev, ok := defined[name]; ok {
			return fmt.Errorf("onnx: graph %q: value %q is defined twice (%s and %s)", g.Name, name, prev, by)
		}
		defined[name] = by
		return nil
	}
	for _, v := range g.Inputs {
		if err := define(v.Name, "graph input"); err != nil {
			return err
		}
		if err := v.validate(); err != nil {
			return err
		}
	}
	for i := range g.Initializers {
		t := &g.Initializers[i]
		if err := define(t.Name, "initializer"); err != nil {
			return err
		}
		if err := t.validate(); err != nil {
			return err
		}
	}
	for i, n := range g.Nodes {
		label := fmt.Sprintf("node %d (%s %q)", i, n.OpType, n.Name)
		if n.OpType == "" {
			return fmt.Errorf("onnx: graph %q: %s has no op type", g.Name, label)
		}
		for _, in := range n.Inputs {
			if _, ok := defined[in]; in != "" && !ok {
				return fmt.Errorf("onnx: graph %q: %s reads %q, which no graph input, initializer or earlier node defines", g.Name, label, in)
			}
		}
		for _, a := range n.Attrs {
			if err := a.validate(); err != nil {
				return fmt.Errorf("onnx: graph %q: %s: %w", g.Name, label, err)
			}
		}
		for _, out := range n.Outputs {
			if err := define(out, label); err != nil {
				return err
			}
		}
	}
	if len(g.Outputs) == 0 {
		return fmt.Errorf("onnx: graph %q has no outputs", g.Name)
	}
	for _, v := range g.Outputs {
		if _, ok := defined[v.Name]; !ok {
			return fmt.Errorf("onnx: graph %q: output %q is not computed by any node", g.Name, v.Name)
		}
		if err := v.validate(); err != nil {
			return err
		}
	}
	return nil
}

func (v ValueInfo) validate() error {
	if v.Type != Float && v.Type != Int64 {
		return fmt.Errorf("onnx: value %q: %v, want float32 or int64", v.Name, v.Type)
	}
	for i, d := range v.Dims {
		if d.Param == "" && d.Value < 0 {
			return fmt.Errorf("onnx: value %q: dimension %d is %d, want ≥ 0 or a name", v.Name, i, d.Value)
		}
	}
	return nil
}

func (t *Tensor) validate() error {
	if t.Float32 != nil && t.Int64 != nil {
		return fmt.Errorf("onnx: tensor %q holds both float32 and int64 values", t.Name)
	}
	n := int64(1)
	for i, d := range t.Dims {
		if d < 0 {
			return fmt.Errorf("onnx: tensor %q: dimension %d is %d, want ≥ 0", t.Name, i, d)
		}
		n *= d
	}
	if int64(t.Len()) != n {
		return fmt.Errorf("onnx: tensor %q has dimensions %v (%d values) but holds %d %v values", t.Name, t.Dims, n, t.Len(), t.DataType())
	}
	return nil
}

func (a Attribute) validate() error {
	if a.Name == "" {
		return errors.New("an attribute has no name")
	}
	switch a.Type {
	case AttrFloat, AttrInt, AttrString, AttrFloats, AttrInts:
	case AttrTensor:
		if a.Tensor == nil {
			return fmt.Errorf("tensor attribute %q has no tensor", a.Name)
		}
		return a.Tensor.validate()
	default:
		return fmt.Errorf("attribute %q has type %d, want one of FLOAT, INT, STRING, TENSOR, FLOATS, INTS", a.Name, a.Type)
	}
	return nil
}
