package viz

import (
	"bytes"
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// DPI is the resolution of every PNG this package writes: a picture of
// w × h inches is w·DPI × h·DPI pixels.
const DPI = 96

// savePNG draws a w × h picture with paint on a white canvas and writes it
// to path as a PNG, atomically (a temporary file in the same folder renamed
// over path), so that a picture rewritten during training is never seen half
// written. A panic inside gonum/plot's drawing is returned as an error.
func savePNG(path string, w, h vg.Length, paint func(dc draw.Canvas)) (err error) {
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI), vgimg.UseBackgroundColor(color.White))
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("viz: drawing %s: %v", path, r)
			}
		}()
		paint(draw.New(c))
	}()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return fmt.Errorf("viz: encoding %s: %w", path, err)
	}
	return writeFileAtomic(path, buf.Bytes())
}

// writeFileAtomic writes b to a temporary file beside path and renames it
// over path.
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("viz: writing %s: %w", path, werr)
	}
	return nil
}
