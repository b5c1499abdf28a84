package data

import (
	"fmt"
	"os"

	"github.com/vit-train/vit-train/augment"
)

// LoadInput reads an image file as a model input of channels channels into
// dst: decoded to RGB as DecodeImage decodes a dataset's files, converted
// to grey when channels is 1 (ITU-R 601 luma, as PIL's convert("L")), then
// run through p, a model's evaluation pipeline (augment.EvalPipeline: the
// resize, the crop and the normalisation it was evaluated with), so that
// the file gives the model what it gives it in an image folder.
// len(dst) is channels × p.Height × p.Width.
func LoadInput(path string, channels int, p *augment.Pipeline, dst []float32) error {
	if channels != 1 && channels != 3 {
		return fmt.Errorf("data: %s: models with %d channels take no image files (1 or 3)", path, channels)
	}
	if want := channels * p.Height * p.Width; p.Height <= 0 || p.Width <= 0 || len(dst) != want {
		return fmt.Errorf("data: %s: input buffer holds %d values, the pipeline makes (%d, %d, %d)", path, len(dst), channels, p.Height, p.Width)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if channels == 3 {
		// The pipeline reads what it needs of the decoded file (a JPEG's
		// bytes, resized in one pass; see augment.ByteSource).
		src, err := decodeSource(raw, path, 0, 3)
		if err != nil {
			return err
		}
		defer src.Release()
		if err := p.ProcessSource(src, nil, dst); err != nil {
			return fmt.Errorf("data: %s: %w", path, err)
		}
		return nil
	}
	img, err := DecodeImage(raw, path, 0)
	if err != nil {
		return err
	}
	if err := p.Process(augment.Grey(img), nil, dst); err != nil {
		return fmt.Errorf("data: %s: %w", path, err)
	}
	return nil
}

// LoadImage reads a JPEG or PNG file as a model sees it before
// normalisation: LoadInput through p, which must not normalise (an
// evaluation pipeline without mean and std), giving (channels, p.Height,
// p.Width) in [0, 1]. Normalize turns it into the model input; pictures
// such as attention maps draw over it.
func LoadImage(path string, channels int, p *augment.Pipeline) (augment.Image, error) {
	if len(p.Mean) != 0 || len(p.Std) != 0 {
		return augment.Image{}, fmt.Errorf("data: %s: LoadImage's pipeline normalises (mean %v, std %v); give it none and call Normalize", path, p.Mean, p.Std)
	}
	img := augment.Image{C: channels, H: p.Height, W: p.Width, Pix: make([]float32, channels*p.Height*p.Width)}
	if err := LoadInput(path, channels, p, img.Pix); err != nil {
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
