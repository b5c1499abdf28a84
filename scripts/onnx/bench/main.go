// Command bench compares the inference time per image of vit-train and of
// ONNX Runtime (CPU, onnxruntime-node) on the same model, batch and number
// of threads, and prints both with the processor's name, family and model
// from /proc/cpuinfo.
//
//	cd scripts/onnx && ONNXRUNTIME_NODE_INSTALL=skip npm ci && cd ../..
//	go run ./scripts/onnx/bench                       # ViT-B/16, batch 4, 2 threads, 20 timed batches
//	go run ./scripts/onnx/bench --iters 2             # a quick check that it works
//
// vit-train runs its evaluation graph with frozen weights, as eval and
// predict do, with GOMAXPROCS = --threads; ONNX Runtime runs the model
// `vit-train export --format onnx` writes, with intraOpNumThreads =
// --threads and every graph optimisation. Both get the same random
// weights and images; each is warmed up with one batch first, and the
// median of the timed batches is reported. The two runs take turns on the
// cores, never both at once. Timings are only meaningful on an otherwise
// idle machine.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/npy"
	"github.com/vit-train/vit-train/formats/onnx"
	"github.com/vit-train/vit-train/interop/onnxexport"
	"github.com/vit-train/vit-train/model"
	// The architectures --model may name, registered with package model.
	_ "github.com/vit-train/vit-train/model/resnet"
	_ "github.com/vit-train/vit-train/model/vit"
)

func main() {
	model := flag.String("model", "vit_base_patch16_224", "registered model (vit-train models)")
	batch := flag.Int("batch", 4, "images per batch")
	threads := flag.Int("threads", 2, "GOMAXPROCS for vit-train and intraOpNumThreads for ONNX Runtime")
	iters := flag.Int("iters", 20, "timed batches per runtime, after one warm-up batch")
	flag.Parse()
	if err := run(*model, *batch, *threads, *iters); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(name string, batch, threads, iters int) error {
	if batch < 1 || threads < 1 || iters < 1 {
		return fmt.Errorf("--batch %d, --threads %d and --iters %d must be positive", batch, threads, iters)
	}
	runtime.GOMAXPROCS(threads)
	spec, err := model.Create(name, model.Overrides{})
	if err != nil {
		return err
	}
	spec = spec.Resolve(3, 224, 1000)
	net, err := model.New(spec, 1)
	if err != nil {
		return err
	}
	channels, size := net.Spec().Input()
	images := make([]float32, batch*channels*size*size)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range images {
		images[i] = float32(rng.NormFloat64())
	}

	dir, err := os.MkdirTemp("", "onnx-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	modelPath, err := export(net, dir)
	if err != nil {
		return err
	}
	inPath := filepath.Join(dir, "input.npy")
	if err := npy.WriteFile(inPath, images, []int{batch, channels, size, size}); err != nil {
		return err
	}

	goMs, goLogits, err := timeVitTrain(net, batch, images, iters)
	if err != nil {
		return err
	}
	ortMs, ortLogits, err := timeORT(modelPath, inPath, filepath.Join(dir, "out"), threads, iters)
	if err != nil {
		return err
	}

	fmt.Printf("CPU: %s\n", cpuInfo())
	fmt.Printf("model %s, batch %d, %d threads, median of %d batches after a warm-up\n", name, batch, threads, iters)
	fmt.Printf("%-32s %10s %10s\n", "runtime", "ms/batch", "ms/image")
	fmt.Printf("%-32s %10.1f %10.1f\n", fmt.Sprintf("vit-train (GOMAXPROCS=%d)", threads), goMs, goMs/float64(batch))
	fmt.Printf("%-32s %10.1f %10.1f\n", fmt.Sprintf("ONNX Runtime (intraOp=%d)", threads), ortMs, ortMs/float64(batch))
	fmt.Printf("ONNX Runtime / vit-train time: %.2f; logits agree to %.1e of the largest\n", ortMs/goMs, relDiff(ortLogits, goLogits))
	return nil
}

// export writes net as ONNX into dir, as vit-train export --format onnx does.
func export(net model.Network, dir string) (string, error) {
	channels, size := net.Spec().Input()
	mean, std := data.ImageNetMeanStd()
	if channels != 3 {
		return "", fmt.Errorf("model %s has %d channels; the benchmark feeds RGB images", net.Spec().Name(), channels)
	}
	evalP, err := augment.EvalPipeline(augment.EvalConfig{Size: size, Interp: augment.Bicubic, Mean: mean, Std: std})
	if err != nil {
		return "", err
	}
	m, err := onnxexport.Export(net, onnxexport.Options{Eval: evalP})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "model.onnx")
	return path, onnx.WriteFile(path, m, "")
}

// timeVitTrain returns the median milliseconds per batch of vit-train's
// evaluation graph, and its predictions.
func timeVitTrain(net model.Network, batch int, images []float32, iters int) (float64, []float32, error) {
	g, err := net.Graph(batch, false, nil)
	if err != nil {
		return 0, nil, err
	}
	if err := g.FreezeWeights(); err != nil {
		return 0, nil, err
	}
	in, err := g.Float32Images()
	if err != nil {
		return 0, nil, err
	}
	copy(in, images)
	if err := g.Run(); err != nil {
		return 0, nil, err
	}
	ms := make([]float64, iters)
	for i := range ms {
		t0 := time.Now()
		if err := g.Run(); err != nil {
			return 0, nil, err
		}
		ms[i] = float64(time.Since(t0).Microseconds()) / 1e3
	}
	return median(ms), g.Predictions(nil), nil
}

// timeORT runs scripts/onnx/run.mjs and returns its median milliseconds
// per batch and the logits.
func timeORT(model, input, outPrefix string, threads, iters int) (float64, []float32, error) {
	script, err := filepath.Abs(filepath.Join("scripts", "onnx", "run.mjs"))
	if err != nil {
		return 0, nil, err
	}
	if _, err := os.Stat(filepath.Join("scripts", "onnx", "node_modules", "onnxruntime-node")); err != nil {
		return 0, nil, fmt.Errorf("run from the repository root after: cd scripts/onnx && ONNXRUNTIME_NODE_INSTALL=skip npm ci (%v)", err)
	}
	cmd := exec.Command("node", script, model, input, outPrefix, "--threads", fmt.Sprint(threads), "--repeat", fmt.Sprint(iters))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, nil, fmt.Errorf("node %s: %w", script, err)
	}
	var r struct{ Ms []float64 }
	if err := json.Unmarshal(out, &r); err != nil || len(r.Ms) != iters {
		return 0, nil, fmt.Errorf("run.mjs printed %q: %v", out, err)
	}
	a, err := npy.ReadFile(outPrefix + "." + onnxexport.Logits + ".npy")
	if err != nil {
		return 0, nil, err
	}
	return median(r.Ms), a.Data, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func relDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var d, peak float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
		peak = max(peak, math.Abs(float64(b[i])))
	}
	return d / peak
}

// cpuInfo is the first processor's model name, family and model in
// /proc/cpuinfo.
func cpuInfo() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	defer f.Close()
	fields := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			if len(fields) > 0 {
				break // the end of the first processor's block
			}
			continue
		}
		if k = strings.TrimSpace(k); fields[k] == "" {
			fields[k] = strings.TrimSpace(v)
		}
	}
	return fmt.Sprintf("%s (family %s, model %s), %d logical CPUs", fields["model name"], fields["cpu family"], fields["model"], runtime.NumCPU())
}
