package data

import (
	"bytes"
	"embed"
	"path"
)

//go:generate go run ./internal/mkembedded -dst embedded/fashion-mnist

// embeddedFS holds the Fashion-MNIST subset (MIT licence, Zalando SE; see
// embedded/fashion-mnist/LICENSE and README.md).
//
//go:embed embedded/fashion-mnist
var embeddedFS embed.FS

// EmbeddedFashionMNISTLicense returns the licence text of the embedded
// Fashion-MNIST subset.
func EmbeddedFashionMNISTLicense() string {
	b, _ := embeddedFS.ReadFile("embedded/fashion-mnist/LICENSE")
	return string(b)
}

// EmbeddedFashionMNIST returns the Fashion-MNIST subset built into the
// binary: the first 10,000 training (Train) or the first 2,000 test (Test)
// images of the real dataset, 28x28 grey, 10 classes. Use FashionMNIST for
// the full set.
func EmbeddedFashionMNIST(split Split) (*Memory, error) {
	if err := split.check(); err != nil {
		return nil, err
	}
	imgName, labName := mnistFileNames(split)
	dir := "embedded/fashion-mnist"
	img, err := embeddedFS.ReadFile(path.Join(dir, imgName+".gz"))
	if err != nil {
		return nil, err
	}
	lab, err := embeddedFS.ReadFile(path.Join(dir, labName+".gz"))
	if err != nil {
		return nil, err
	}
	return decodeIDX(bytes.NewReader(img), "embedded:"+imgName+".gz", bytes.NewReader(lab), "embedded:"+labName+".gz", FashionMNISTClasses())
}
