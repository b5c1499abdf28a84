package viz

import (
	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/data"
)

// LoadImage reads a JPEG or PNG file as a model sees it, before
// normalisation: data.LoadInput's decoding, grey conversion (channels 1),
// shorter-side resize and centre crop, giving (channels, size, size) in
// [0, 1]. Normalize turns it into the model input.
func LoadImage(path string, size, channels int) (augment.Image, error) {
	img := augment.Image{C: channels, H: size, W: size, Pix: make([]float32, channels*size*size)}
	if err := data.LoadInput(path, channels, size, nil, nil, img.Pix); err != nil {
		return augment.Image{}, err
	}
	return img, nil
}

// Normalize returns the model input for img: (v − mean[c]) / std[c] per
// channel, (C, H, W). With no mean and std the values are copied as they are.
// img is left unchanged.
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
