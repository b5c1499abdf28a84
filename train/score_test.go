package train

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestScorer(t *testing.T) {
	s := NewScorer(3)
	// Sample 0: true 0, predicted 0. Sample 1: true 1, predicted 2 (true class ranks 2nd).
	s.Add([]float32{2, 1, 0, 0, 1, 3}, []int{0, 1})
	r := s.Result()
	if r.N != 2 || r.Top1 != 50 || r.Top5 != 100 {
		t.Fatalf("got n=%d top1=%v top5=%v", r.N, r.Top1, r.Top5)
	}
	lse := func(v ...float64) float64 {
		s := 0.0
		for _, x := range v {
			s += math.Exp(x)
		}
		return math.Log(s)
	}
	want := ((lse(2, 1, 0) - 2) + (lse(0, 1, 3) - 1)) / 2
	if math.Abs(r.Loss-want) > 1e-6 {
		t.Fatalf("loss %v, want %v", r.Loss, want)
	}
	if r.Confusion[0][0] != 1 || r.Confusion[1][2] != 1 || r.PerClass[0] != 100 || r.PerClass[1] != 0 {
		t.Fatalf("confusion %v per-class %v", r.Confusion, r.PerClass)
	}
	// Class 2 has no images: its row gives no accuracy.
	dir := t.TempDir()
	if err := r.WriteReport(dir, "eval_", []string{"cat", "dog", "fox"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "eval_per_class.csv"))
	if want := "class,name,images,top1\n0,cat,1,100.00\n1,dog,1,0.00\n2,fox,0,\n"; err != nil || string(b) != want {
		t.Errorf("eval_per_class.csv:\n%s%v\nwant\n%s", b, err, want)
	}
}

func TestScorerTop5NeedsFiveAbove(t *testing.T) {
	s := NewScorer(7)
	// True class 6 has the lowest score: rank 6, outside the top 5.
	s.Add([]float32{7, 6, 5, 4, 3, 2, 1}, []int{6})
	if r := s.Result(); r.Top5 != 0 {
		t.Fatalf("top5 %v, want 0", r.Top5)
	}
	s.Add([]float32{7, 6, 5, 4, 1, 2, 3}, []int{6}) // rank 4 → in the top 5
	if r := s.Result(); r.Top5 != 50 {
		t.Fatalf("top5 %v, want 50", r.Top5)
	}
}
