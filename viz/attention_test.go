package viz_test

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/train"
	"github.com/vit-train/vit-train/viz"
)

// attendTiny loads a tiny checkpoint and runs it on an 8×8 grey image,
// returning the attention, the image as loaded and the checkpoint.
func attendTiny(t *testing.T, distilled bool) (*viz.Attention, augment.Image, *train.Checkpoint) {
	t.Helper()
	ck, n, err := train.OpenNetwork(tinyCheckpoint(t, distilled), train.NetworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "img.png")
	writeGreyPNG(t, path, 8, 8, func(x, y int) uint8 { return uint8(30*x + 3*y) })
	view, err := augment.EvalPipeline(augment.EvalConfig{Size: 8, Interp: augment.Bicubic})
	if err != nil {
		t.Fatal(err)
	}
	img, err := data.LoadImage(path, 1, &view)
	if err != nil {
		t.Fatal(err)
	}
	input, err := data.Normalize(img, ck.Mean, ck.Std)
	if err != nil {
		t.Fatal(err)
	}
	a, err := viz.NewAttender(n)
	if err != nil {
		t.Fatal(err)
	}
	att, err := a.Attend(input)
	if err != nil {
		t.Fatal(err)
	}
	return att, img, ck
}

func TestAttendTinyModel(t *testing.T) {
	for _, distilled := range []bool{false, true} {
		t.Run(fmt.Sprintf("distilled=%v", distilled), func(t *testing.T) {
			att, _, _ := attendTiny(t, distilled)
			prefix := 1
			if distilled {
				prefix = 2
			}
			n := prefix + 4
			if att.Heads != 2 || att.Tokens != n || att.Prefix != prefix || att.Grid != 2 || len(att.Layers) != 2 || len(att.Logits) != 3 {
				t.Fatalf("attention: heads %d, tokens %d, prefix %d, grid %d, %d layers, %d logits",
					att.Heads, att.Tokens, att.Prefix, att.Grid, len(att.Layers), len(att.Logits))
			}
			for l, p := range att.Layers {
				if len(p) != 2*n*n {
					t.Fatalf("layer %d has %d values", l, len(p))
				}
				for r := 0; r < 2*n; r++ {
					var sum float64
					for _, v := range p[r*n : (r+1)*n] {
						sum += v
					}
					if !near(sum, 1, 1e-5) {
						t.Fatalf("layer %d row %d sums to %g", l, r, sum)
					}
				}
			}
			// The maps are the rollout's / last layer's prefix rows over the patches.
			roll, err := viz.Rollout(att.Layers, att.Heads, n)
			if err != nil {
				t.Fatal(err)
			}
			last, err := viz.HeadMean(att.Layers[1], att.Heads, n)
			if err != nil {
				t.Fatal(err)
			}
			for tok := 0; tok < prefix; tok++ {
				for _, c := range []struct {
					method viz.Method
					joint  []float64
				}{{viz.MethodRollout, roll}, {viz.MethodLast, last}} {
					m, err := att.Map(c.method, tok)
					if err != nil {
						t.Fatal(err)
					}
					if len(m) != 4 {
						t.Fatalf("%s map of token %d has %d values", c.method, tok, len(m))
					}
					for j, v := range m {
						if v != c.joint[tok*n+prefix+j] {
							t.Fatalf("%s map of token %d = %v, want row %d of the joint attention from column %d", c.method, tok, m, tok, prefix)
						}
					}
				}
			}
			heads, err := att.HeadMaps(0)
			if err != nil {
				t.Fatal(err)
			}
			for h, m := range heads {
				for j, v := range m {
					if want := att.Layers[1][h*n*n+prefix+j]; v != want {
						t.Fatalf("head %d map[%d] = %g, want %g", h, j, v, want)
					}
				}
			}
			// The heads disagree: the test model's attention is not uniform.
			if heads[0][0] == heads[1][0] {
				t.Error("both heads give the same attention")
			}
			if _, err := att.Map(viz.MethodRollout, prefix); err == nil {
				t.Error("Map accepted a patch token")
			}
		})
	}
}

func TestAttendRejectsWrongInput(t *testing.T) {
	_, n, err := train.OpenNetwork(tinyCheckpoint(t, false), train.NetworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := viz.NewAttender(n)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Attend(make([]float32, 63)); err == nil {
		t.Error("Attend accepted 63 values for a (1, 8, 8) input")
	}
}

func TestParseMethod(t *testing.T) {
	for _, s := range []string{"rollout", "last"} {
		if m, err := viz.ParseMethod(s); err != nil || string(m) != s {
			t.Errorf("ParseMethod(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := viz.ParseMethod("grad-cam"); err == nil {
		t.Error("ParseMethod accepted grad-cam")
	}
}

func TestAttentionFigure(t *testing.T) {
	for _, distilled := range []bool{false, true} {
		att, img, _ := attendTiny(t, distilled)
		fig := viz.AttentionFigure{Title: "tiny", Image: img, Att: att, Method: viz.MethodRollout}
		rows, err := fig.Panels()
		if err != nil {
			t.Fatal(err)
		}
		wantTop := []string{"input", "[CLS] rollout"}
		if distilled {
			wantTop = append(wantTop, "dist rollout")
		}
		if len(rows) != 2 || len(rows[0]) != len(wantTop) || len(rows[1]) != 2 {
			t.Fatalf("panel rows %d, top %d, heads %d", len(rows), len(rows[0]), len(rows[1]))
		}
		for i, w := range wantTop {
			if rows[0][i].Title != w {
				t.Errorf("top panel %d is %q, want %q", i, rows[0][i].Title, w)
			}
		}
		// Pictures are the 8×8 image enlarged by an integer factor.
		for _, r := range rows {
			for _, p := range r {
				if b := p.Image.Bounds(); b.Dx() != b.Dy() || b.Dx()%8 != 0 || b.Dx() < 8 {
					t.Errorf("panel %q is %v", p.Title, b)
				}
			}
		}
		path := filepath.Join(t.TempDir(), "att.png")
		if err := fig.Save(path); err != nil {
			t.Fatal(err)
		}
		// Each column is cell + 2 margins = 1.72 in wide; the title is 0.35 in
		// and each row cell + title + 2 margins = 1.97 in high.
		cols := len(wantTop)
		decodePNG(t, path, pixels(float64(cols)*1.72), pixels(0.35+2*1.97))
	}
}

// TestFigureTitleIsWhole checks that a title wider than the panels (a
// model of one or two heads) widens the figure instead of running off
// both edges.
func TestFigureTitleIsWhole(t *testing.T) {
	cell := image.NewGray(image.Rect(0, 0, 8, 8))
	title := "img0.png: Ankle boot 97.3% (vit_fmnist_patch4_28), rollout"
	path := filepath.Join(t.TempDir(), "fig.png")
	if err := viz.SaveFigure(path, title, [][]viz.Panel{{{Title: "input", Image: cell}, {Title: "[CLS] rollout", Image: cell}}}, viz.AttentionCell); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() <= pixels(2*1.72) {
		t.Errorf("the figure is %d pixels wide, no wider than its two panels", b.Dx())
	}
	// No ink in the outer pixel columns of the title band.
	for y := b.Min.Y; y < b.Min.Y+pixels(0.35); y++ {
		for _, x := range []int{b.Min.X, b.Min.X + 1, b.Max.X - 2, b.Max.X - 1} {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xc000 || g < 0xc000 || bl < 0xc000 {
				t.Fatalf("the title touches the figure's edge at (%d, %d)", x, y)
			}
		}
	}
}
