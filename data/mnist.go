package data

import (
	"fmt"
	"os"
	"path/filepath"
)

// DefaultFashionMNISTDir is where Debian's dataset-fashion-mnist package
// installs the full Fashion-MNIST (60,000 training and 10,000 test images).
const DefaultFashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// FashionMNISTClasses returns the Fashion-MNIST class names, indexed by
// label (a new slice each call).
func FashionMNISTClasses() []string {
	return []string{
		"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
		"Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
	}
}

// MNISTClasses returns the MNIST digit names, indexed by label (a new
// slice each call).
func MNISTClasses() []string { return []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"} }

// FashionMNIST opens the Fashion-MNIST split stored in dir under the
// official file names (train-images-idx3-ubyte[.gz],
// train-labels-idx1-ubyte[.gz], t10k-...). dir "" means
// DefaultFashionMNISTDir.
func FashionMNIST(dir string, split Split) (*Memory, error) {
	if dir == "" {
		dir = DefaultFashionMNISTDir
	}
	return openMNISTStyle(dir, split, FashionMNISTClasses())
}

// MNIST opens the MNIST split stored in dir under the official file names
// (as FashionMNIST).
func MNIST(dir string, split Split) (*Memory, error) {
	return openMNISTStyle(dir, split, MNISTClasses())
}

// mnistFileNames returns the official image and label file names of a split,
// without the .gz suffix.
func mnistFileNames(split Split) (images, labels string) {
	prefix := "train"
	if split == Test {
		prefix = "t10k"
	}
	return prefix + "-images-idx3-ubyte", prefix + "-labels-idx1-ubyte"
}

func openMNISTStyle(dir string, split Split, classes []string) (*Memory, error) {
	if err := split.check(); err != nil {
		return nil, err
	}
	imgName, labName := mnistFileNames(split)
	imgPath, err := findFile(dir, imgName)
	if err != nil {
		return nil, err
	}
	labPath, err := findFile(dir, labName)
	if err != nil {
		return nil, err
	}
	return OpenIDX(imgPath, labPath, classes)
}

// findFile returns dir/name.gz or dir/name, whichever exists (gzipped first).
func findFile(dir, name string) (string, error) {
	for _, p := range []string{filepath.Join(dir, name+".gz"), filepath.Join(dir, name)} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("data: neither %s.gz nor %s found in %s", name, name, dir)
}
