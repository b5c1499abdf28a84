package resnet

import (
	"fmt"
	"sort"
	"strings"
)

// arch describes one member of the family.
type arch struct {
	cifar      bool  // 3×3 stem at full resolution, no max pool
	bottleneck bool  // 1×1–3×3–1×1 blocks with expansion 4
	blocks     []int // blocks per stage
	widths     []int // base width of each stage
}

var imagenetWidths = []int{64, 128, 256, 512}

// cifarWidths are He et al.'s three CIFAR stages of 16, 32 and 64 channels.
var cifarWidths = []int{16, 32, 64}

// cifarArch is the depth-(6n+2) CIFAR ResNet: three stages of n basic blocks.
func cifarArch(n int) arch {
	return arch{cifar: true, blocks: []int{n, n, n}, widths: cifarWidths}
}

var archs = map[string]arch{
	"resnet20":  cifarArch(3),
	"resnet32":  cifarArch(5),
	"resnet44":  cifarArch(7),
	"resnet56":  cifarArch(9),
	"resnet110": cifarArch(18),
	"resnet18":  {blocks: []int{2, 2, 2, 2}, widths: imagenetWidths},
	"resnet34":  {blocks: []int{3, 4, 6, 3}, widths: imagenetWidths},
	"resnet50":  {bottleneck: true, blocks: []int{3, 4, 6, 3}, widths: imagenetWidths},
	"resnet101": {bottleneck: true, blocks: []int{3, 4, 23, 3}, widths: imagenetWidths},
	"resnet152": {bottleneck: true, blocks: []int{3, 8, 36, 3}, widths: imagenetWidths},
}

// Archs lists the architecture names New accepts.
func Archs() []string {
	names := make([]string, 0, len(archs))
	for n := range archs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// convBN is a bias-free convolution followed by a batch norm: the unit every
// ResNet is made of. conv and bn are the parameter-name prefixes.
type convBN struct {
	conv, bn            string
	in, out             int
	kernel, stride, pad int
}

// block is one residual block: the main path's conv–BN units (ReLU between
// them) and, when the shape changes, a projection shortcut.
type block struct {
	units []convBN
	down  *convBN
}

// plan is the whole network as a list of units in parameter order.
type plan struct {
	stem     convBN
	maxPool  bool
	blocks   []block
	features int // width of the pooled features fed to fc
}

func newPlan(a arch, channels int) plan {
	p := plan{stem: convBN{conv: "conv1", bn: "bn1", in: channels, out: a.widths[0], kernel: 7, stride: 2, pad: 3}, maxPool: true}
	if a.cifar {
		p.stem.kernel, p.stem.stride, p.stem.pad = 3, 1, 1
		p.maxPool = false
	}
	expansion := 1
	if a.bottleneck {
		expansion = 4
	}
	in := a.widths[0]
	for s, n := range a.blocks {
		w := a.widths[s]
		for i := 0; i < n; i++ {
			stride := 1
			if s > 0 && i == 0 {
				stride = 2
			}
			prefix := fmt.Sprintf("layer%d.%d.", s+1, i)
			unit := func(j, cin, cout, k, stride int) convBN {
				return convBN{conv: fmt.Sprintf("%sconv%d", prefix, j), bn: fmt.Sprintf("%sbn%d", prefix, j),
					in: cin, out: cout, kernel: k, stride: stride, pad: k / 2}
			}
			var b block
			if a.bottleneck {
				b.units = []convBN{unit(1, in, w, 1, 1), unit(2, w, w, 3, stride), unit(3, w, w*expansion, 1, 1)}
			} else {
				b.units = []convBN{unit(1, in, w, 3, stride), unit(2, w, w, 3, 1)}
			}
			if stride != 1 || in != w*expansion {
				b.down = &convBN{conv: prefix + "downsample.0", bn: prefix + "downsample.1",
					in: in, out: w * expansion, kernel: 1, stride: stride}
			}
			p.blocks = append(p.blocks, b)
			in = w * expansion
		}
	}
	p.features = in
	return p
}

// units returns every conv–BN unit in parameter order: the stem, then each
// block's main path followed by its shortcut.
func (p plan) units() []convBN {
	us := []convBN{p.stem}
	for _, b := range p.blocks {
		us = append(us, b.units...)
		if b.down != nil {
			us = append(us, *b.down)
		}
	}
	return us
}

func lookupArch(name string) (arch, error) {
	a, ok := archs[strings.ToLower(name)]
	if !ok {
		return arch{}, fmt.Errorf("resnet: BuildConfig.Arch %q is not one of %s", name, strings.Join(Archs(), ", "))
	}
	return a, nil
}
