package optim

import (
	"fmt"
	"slices"
	"testing"
)

func TestWeightDecayGroupsFollowTimm(t *testing.T) {
	params := vitBParams()
	groups := WeightDecayGroups(params, 0.05, vitNoDecayNames)
	if len(groups) != 2 || groups[0].Name != "no_decay" || groups[1].Name != "decay" {
		t.Fatalf("groups %v, want no_decay then decay", groups)
	}
	if groups[0].WeightDecay != 0 || groups[1].WeightDecay != 0.05 || groups[0].LRScale != 1 || groups[1].LRScale != 1 {
		t.Fatalf("group settings %+v %+v", groups[0], groups[1])
	}
	var decayed []string
	for _, i := range groups[1].Params {
		decayed = append(decayed, params[i].Name)
	}
	want := []string{"patch_embed.proj.weight"}
	for k := range 12 {
		for _, w := range []string{"attn.qkv.weight", "attn.proj.weight", "mlp.fc1.weight", "mlp.fc2.weight"} {
			want = append(want, fmt.Sprintf("blocks.%d.%s", k, w))
		}
	}
	want = append(want, "head.weight")
	if !slices.Equal(decayed, want) {
		t.Fatalf("decayed params:\n%v\nwant\n%v", decayed, want)
	}
	if len(groups[0].Params)+len(groups[1].Params) != len(params) {
		t.Fatal("groups do not cover all params")
	}
}

func TestNoDecayGroupGetsNoDecay(t *testing.T) {
	// With zero gradients AdamW's update is only the decay p ← (1−lr·wd)p.
	params := []Param{
		{Name: "cls_token", Shape: []int{1, 1, 2}, Data: []float32{1, 2}},
		{Name: "pos_embed", Shape: []int{1, 2, 1}, Data: []float32{3, 4}},
		{Name: "fc.weight", Shape: []int{1, 2}, Data: []float32{5, 6}},
		{Name: "fc.bias", Shape: []int{2}, Data: []float32{7, 8}},
		{Name: "odd.bias", Shape: []int{1, 2}, Data: []float32{9, 10}},
	}
	o, err := NewAdamW(params, WeightDecayGroups(params, 0.5, vitNoDecayNames), DefaultAdamWConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Step(0.1, randomZeroGrads(params)); err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{1, 2}, {3, 4}, {5 * 0.95, 6 * 0.95}, {7, 8}, {9, 10}}
	for i, p := range params {
		assertClose(t, p.Name, p.Data, want[i], 1e-7)
	}
}

func randomZeroGrads(params []Param) [][]float32 {
	out := make([][]float32, len(params))
	for i, p := range params {
		out[i] = make([]float32, len(p.Data))
	}
	return out
}

func TestResolveGroupsRejectsBadCover(t *testing.T) {
	params := []Param{{Name: "a", Shape: []int{1}, Data: []float32{0}}, {Name: "b", Shape: []int{1}, Data: []float32{0}}}
	for name, groups := range map[string][]Group{
		"missing":      {{Name: "g", LRScale: 1, Params: []int{0}}},
		"twice":        {{Name: "g", LRScale: 1, Params: []int{0, 1}}, {Name: "h", LRScale: 1, Params: []int{1}}},
		"out of range": {{Name: "g", LRScale: 1, Params: []int{0, 1, 2}}},
		"negative wd":  {{Name: "g", WeightDecay: -1, LRScale: 1, Params: []int{0, 1}}},
	} {
		if _, err := NewAdamW(params, groups, DefaultAdamWConfig()); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
