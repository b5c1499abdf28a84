package runner_test

import (
	"testing"
	"time"

	"github.com/vit-train/vit-train/nn/runner"
)

// TestTimeOps checks that a timing program records each op of every run
// it makes, and only those: the chain's four Linear layers, of one output
// shape, as one entry of four calls a run, whose time fits inside the
// runs' own; that a timed run allocates nothing; and that nothing is
// recorded after StopTiming.
func TestTimeOps(t *testing.T) {
	g, _, _, y := chain(t, 64, 32)
	p, err := runner.Compile(g, y)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err != nil { // not timed
		t.Fatal(err)
	}
	start := time.Now()
	times := p.TimeOps()
	const runs = 3
	for range runs {
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
	}
	if a := testing.AllocsPerRun(5, func() { _ = p.Run() }); a > 0 {
		t.Errorf("a timed run allocates %v times", a)
	}
	p.StopTiming()
	wall := time.Since(start)
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	all := runs + 6 // AllocsPerRun runs once more than it is asked to
	if times.Runs() != all {
		t.Fatalf("%d runs timed, want %d", times.Runs(), all)
	}
	byOp := times.ByOp()
	if len(byOp) != 1 {
		t.Fatalf("ops timed: %+v, want the four Linear layers as one", byOp)
	}
	lin := byOp[0]
	if lin.Op != "Linear" || lin.Shape != "(64, 32)" || lin.Calls != 4*all {
		t.Fatalf("ops timed: %+v, want %d calls of Linear (64, 32)", lin, 4*all)
	}
	if lin.Spent <= 0 || lin.Spent > wall {
		t.Fatalf("Linear took %v over %d runs, which took %v in all", lin.Spent, all, wall)
	}
}
