package augment

import "math/rand/v2"

// RandomCrop pads the image by Padding pixels of value Fill on every side and
// cuts a random (H, W) region, as torchvision's RandomCrop(size, padding) does
// (the CIFAR standard is padding 4, fill 0). When the padded image is smaller
// than the crop the missing part is also filled (torchvision raises an error
// instead).
type RandomCrop struct {
	H, W    int
	Padding int
	Fill    float32
}

// Apply crops img (see RandomCrop).
func (rc RandomCrop) Apply(img Image, rng *rand.Rand) Image {
	ph, pw := img.H+2*rc.Padding, img.W+2*rc.Padding
	top, left := 0, 0
	if ph > rc.H {
		top = rng.IntN(ph - rc.H + 1)
	}
	if pw > rc.W {
		left = rng.IntN(pw - rc.W + 1)
	}
	if rc.Padding == 0 && top == 0 && left == 0 && img.H == rc.H && img.W == rc.W {
		return img
	}
	out := cropFill(img, top-rc.Padding, left-rc.Padding, rc.H, rc.W, rc.Fill)
	Recycle(img)
	return out
}
