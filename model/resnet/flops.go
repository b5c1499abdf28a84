package resnet

// MACs is the multiply-adds of one image's forward pass through cfg's
// network: every convolution (output pixels × out × in × kernel²) and fc
// (features × classes); batch norms, ReLUs, additions and pooling are not
// counted, as fvcore and torchvision's model cards count them (ResNet-50
// at 224 px: 4.09 G). An unset image size (0) gives 0.
func MACs(cfg BuildConfig) (int64, error) {
	cfg = cfg.withDefaults()
	a, err := cfg.validate()
	if err != nil || cfg.ImageSize == 0 {
		return 0, err
	}
	p := newPlan(a, cfg.Channels)
	size, total := convMACs(p.stem, cfg.ImageSize)
	if p.maxPool {
		size = (size+2*MaxPoolPad-MaxPoolKernel)/MaxPoolStride + 1
	}
	for _, b := range p.blocks {
		in := size
		for _, u := range b.units {
			var n int64
			size, n = convMACs(u, size)
			total += n
		}
		if b.down != nil {
			_, n := convMACs(*b.down, in)
			total += n
		}
	}
	return total + int64(p.features)*int64(cfg.NumClasses), nil
}

// convMACs is the output size of u on a size×size input and its
// multiply-adds.
func convMACs(u convBN, size int) (int, int64) {
	out := (size+2*u.pad-u.kernel)/u.stride + 1
	return out, int64(out*out) * int64(u.out*u.in*u.kernel*u.kernel)
}
