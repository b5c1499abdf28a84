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

// LoadImage reads a JPEG or PNG file as a model sees it before
// normalisation: LoadInput's decoding, grey conversion (channels 1),
// shorter-side resize and centre crop, giving (channels, size, size) in
// [0, 1]. Normalize turns it into the model input; pictures such as
// attention maps draw over it.
func LoadImage(path string, size, channels int) (augment.Image, error) {
	img := augment.Image{C: channels, H: size, W: size, Pix: make([]float32, channels*size*size)}
	if err := LoadInput(path, channels, size, nil, nil, img.Pix); err != nil {
		return augment.Image{}, err
	}
	return img, nil
}

// Normalize returns the model input for img: (v − mean[c]) / std[c] per
// channel, (C, H, W). With no mean and std the values are copied as they
// are. img is left unchanged.
func Normalize(img augment.Image, mean, std []float32) ([]float32, error) {
	if err := img.Valid(); err != nil {
		return nil, err
	}
	out := make([]float32, len(img.Pix))
	p := augment.Pipeline{Mean: mean, Std: std}
	if err := p.Process(img.Clone(), nil, out); err != nil {
		return nil, err
	}
	return out, nil
}
