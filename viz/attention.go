package viz

import (
	"fmt"

	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/nn"
)

// Method selects how the map of a prefix token over the patches is made.
type Method string

const (
	// MethodRollout is attention rollout through all the blocks (Rollout).
	MethodRollout Method = "rollout"
	// MethodLast is the last block's attention averaged over its heads.
	MethodLast Method = "last"
)

// ParseMethod parses "rollout" or "last".
func ParseMethod(s string) (Method, error) {
	switch m := Method(s); m {
	case MethodRollout, MethodLast:
		return m, nil
	}
	return "", fmt.Errorf("viz: unknown attention method %q (want rollout or last)", s)
}

// Attention is one image's attention in every block of a token network
// (a ViT).
type Attention struct {
	// Layers holds each block's attention probabilities, first block first,
	// each (Heads, Tokens, Tokens): row i is how token i attends to every token.
	Layers [][]float64
	Heads  int
	Tokens int // N = Prefix + Grid²
	Prefix int // prefix tokens: [CLS] (0) and, for distilled models, dist (1)
	Grid   int // patches along each side
	// Logits are the model's inference logits for the image, (classes):
	// the class head, or the mean of the two heads of a distilled model.
	Logits []float32
}

// Joint returns the (N, N) matrix that method makes of the blocks'
// attention: the rollout, or the last block's head mean.
func (a *Attention) Joint(method Method) ([]float64, error) {
	if len(a.Layers) == 0 {
		return nil, fmt.Errorf("viz: no attention layers")
	}
	switch method {
	case MethodRollout:
		return Rollout(a.Layers, a.Heads, a.Tokens)
	case MethodLast:
		return HeadMean(a.Layers[len(a.Layers)-1], a.Heads, a.Tokens)
	}
	return nil, fmt.Errorf("viz: unknown attention method %q", method)
}

// Map returns how prefix token token (0 for [CLS], 1 for the distillation
// token) attends to the patches by method, (Grid²) in patch order.
func (a *Attention) Map(method Method, token int) ([]float64, error) {
	if token < 0 || token >= a.Prefix {
		return nil, fmt.Errorf("viz: token %d is not one of the %d prefix tokens", token, a.Prefix)
	}
	j, err := a.Joint(method)
	if err != nil {
		return nil, err
	}
	return TokenMap(j, a.Tokens, token, a.Prefix)
}

// HeadMaps returns the last block's attention from prefix token token to the
// patches for each head, Heads maps of (Grid²).
func (a *Attention) HeadMaps(token int) ([][]float64, error) {
	if len(a.Layers) == 0 {
		return nil, fmt.Errorf("viz: no attention layers")
	}
	if token < 0 || token >= a.Prefix {
		return nil, fmt.Errorf("viz: token %d is not one of the %d prefix tokens", token, a.Prefix)
	}
	last, n := a.Layers[len(a.Layers)-1], a.Tokens
	if len(last) != a.Heads*n*n {
		return nil, fmt.Errorf("viz: last layer has %d values, want %d*%d*%d", len(last), a.Heads, n, n)
	}
	out := make([][]float64, a.Heads)
	for h := range out {
		m, err := TokenMap(last[h*n*n:(h+1)*n*n], n, token, a.Prefix)
		if err != nil {
			return nil, err
		}
		out[h] = m
	}
	return out, nil
}

// Attender runs a token network (a ViT) on one image at a time and reads
// its attention.
type Attender struct {
	g              *nn.Graph
	name           string
	channels, size int // the input, (C, H, W) = (channels, size, size)
	tokens         model.Tokens
}

// NewAttender builds n's evaluation graph for a batch of one image. A
// network without tokens (model.TokensOf) or without attention is an
// error naming it.
func NewAttender(n model.Network) (*Attender, error) {
	spec := n.Spec()
	tokens, ok := model.TokensOf(spec)
	if !ok {
		return nil, fmt.Errorf("viz: model %s is a %s, which has no tokens to attend over", spec.Name(), spec.Arch())
	}
	g, err := n.Graph(1, false, nil)
	if err != nil {
		return nil, err
	}
	if len(g.Attention) == 0 {
		return nil, fmt.Errorf("viz: model %s's graph has no attention", spec.Name())
	}
	for _, op := range g.Attention {
		op.RecordProbs()
	}
	channels, size := spec.Input()
	return &Attender{g: g, name: spec.Name(), channels: channels, size: size, tokens: tokens}, nil
}

// Attend runs the model on one normalised image, input (C, H, W) as the
// model's spec says, and returns its attention and logits.
func (a *Attender) Attend(input []float32) (*Attention, error) {
	if want := a.channels * a.size * a.size; len(input) != want {
		return nil, fmt.Errorf("viz: input has %d values, model %s takes (C, H, W) = (%d, %d, %d)", len(input), a.name, a.channels, a.size, a.size)
	}
	images, err := a.g.Float32Images()
	if err != nil {
		return nil, err
	}
	copy(images, input)
	if err := a.g.Run(); err != nil {
		return nil, err
	}
	t := a.tokens
	out := &Attention{Prefix: t.Prefix, Grid: t.Grid, Logits: a.g.Predictions(nil)}
	for i, op := range a.g.Attention {
		p, b, h, n := op.Probs()
		if b != 1 || n != t.Count {
			return nil, fmt.Errorf("viz: block %d attention is (%d, %d, %d, %d), want batch 1 and %d tokens", i, b, h, n, n, t.Count)
		}
		out.Layers = append(out.Layers, p)
		out.Heads, out.Tokens = h, n
	}
	return out, nil
}
