package data

import (
	"fmt"
	"os"

	"github.com/vit-train/vit-train/augment"
)

// LoadInput reads an image file as a model input (c, size, size) into dst:
// decoded to RGB, converted to grey when c is 1 (ITU-R 601 luma, as PIL's
// convert("L")), the shorter side resized to size (bicubic) and the centre
// cropped to size×size — an image already size×size passes unchanged — then
// normalised with mean and std.
func LoadInput(path string, c, size int, mean, std []float32, dst []float32) error {
	if c != 1 && c != 3 {
		return fmt.Errorf("data: %s: models with %d channels take no image files (1 or 3)", path, c)
	}
	if len(dst) != c*size*size {
		return fmt.Errorf("data: %s: input buffer holds %d values, want %d×%d×%d", path, len(dst), c, size, size)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	img, err := DecodeImage(raw, path, 0)
	if err != nil {
		return err
	}
	if c == 1 {
		img = augment.Grey(img)
	}
	p := augment.Pipeline{
		Transform: augment.Compose(augment.Resize{Size: size, Interp: augment.Bicubic}, augment.CenterCrop{H: size, W: size}),
		Mean:      mean, Std: std, Height: size, Width: size,
	}
	if err := p.Process(img, nil, dst); err != nil {
		return fmt.Errorf("data: %s: %w", path, err)
	}
	return nil
}
