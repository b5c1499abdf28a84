package optim

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// TestAdamWReportRows checks ReportRows: every row of each reported
// parameter is reported once a step, in pieces of whole multiples of its
// alignment (the last row excepted), each after its rows hold their new
// values; the update is that of an AdamW that reports nothing, bit for
// bit; and parameters it cannot cut into rows are refused.
func TestAdamWReportRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	params := []Param{
		newParam(rng, "a.weight", 70, 50),
		newParam(rng, "a.bias", 70),
		newParam(rng, "b.weight", 301, 1000),
		newParam(rng, "c.weight", 3, 5),
	}
	rowLen, align := []int{50, 0, 1000, 5}, []int{32, 0, 32, 2}
	plainParams := cloneData(params)
	watched, err := NewAdamW(params, nil, DefaultAdamWConfig())
	if err != nil {
		t.Fatal(err)
	}
	plain, err := NewAdamW(plainParams, nil, DefaultAdamWConfig())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen [][]int // per parameter, how many times each row was reported
	snapshot := make([][]float32, len(params))
	err = watched.ReportRows(rowLen, align, func(param, r0, r1 int) {
		mu.Lock()
		defer mu.Unlock()
		rows := len(params[param].Data) / rowLen[param]
		if r0%align[param] != 0 || (r1%align[param] != 0 && r1 != rows) || r0 >= r1 {
			t.Errorf("%s: rows [%d, %d) of %d reported, not in steps of %d", params[param].Name, r0, r1, rows, align[param])
		}
		for r := r0; r < r1; r++ {
			seen[param][r]++
		}
		n := rowLen[param]
		copy(snapshot[param][r0*n:r1*n], params[param].Data[r0*n:r1*n])
	})
	if err != nil {
		t.Fatal(err)
	}
	for step := range 3 {
		seen = make([][]int, len(params))
		for i, p := range params {
			if rowLen[i] > 0 {
				seen[i] = make([]int, len(p.Data)/rowLen[i])
				snapshot[i] = make([]float32, len(p.Data))
			}
		}
		grads := randomGrads(rng, params, 1)
		if err := watched.Step(1e-2, grads); err != nil {
			t.Fatal(err)
		}
		if err := plain.Step(1e-2, grads); err != nil {
			t.Fatal(err)
		}
		for i, p := range params {
			for j, v := range p.Data {
				if math.Float32bits(v) != math.Float32bits(plainParams[i].Data[j]) {
					t.Fatalf("step %d: %s[%d] = %v, %v without ReportRows", step, p.Name, j, v, plainParams[i].Data[j])
				}
			}
			for r, times := range seen[i] {
				if times != 1 {
					t.Fatalf("step %d: %s's row %d reported %d times", step, p.Name, r, times)
				}
			}
			for j, v := range snapshot[i] {
				if v != p.Data[j] {
					t.Fatalf("step %d: %s[%d] was %v when its row was reported, %v after the step", step, p.Name, j, v, p.Data[j])
				}
			}
		}
	}
	for name, bad := range map[string][2][]int{
		"too few":      {{50, 0}, {32, 0}},
		"not rows":     {{51, 0, 1000, 5}, {32, 0, 32, 2}},
		"no alignment": {{50, 0, 1000, 5}, {32, 0, 0, 2}},
	} {
		if err := watched.ReportRows(bad[0], bad[1], func(int, int, int) {}); err == nil || !strings.Contains(err.Error(), "optim:") {
			t.Errorf("%s: ReportRows(%v, %v) = %v, want an error", name, bad[0], bad[1], err)
		}
	}
}

// cloneData returns params with copies of their values.
func cloneData(params []Param) []Param {
	out := make([]Param, len(params))
	for i, p := range params {
		out[i] = p
		out[i].Data = append([]float32(nil), p.Data...)
	}
	return out
}
