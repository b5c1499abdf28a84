package augment

// Grey converts a (3, H, W) RGB image to a (1, H, W) grey one with PIL's
// convert("L") weights (ITU-R 601-2 luma); other images are returned as they
// are. The input is recycled.
func Grey(img Image) Image {
	if img.C != 3 {
		return img
	}
	out := NewImage(1, img.H, img.W)
	r, g, b := img.Plane(0), img.Plane(1), img.Plane(2)
	for i := range out.Pix {
		out.Pix[i] = lumaR*r[i] + lumaG*g[i] + lumaB*b[i]
	}
	Recycle(img)
	return out
}
