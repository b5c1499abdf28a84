package data

// Per-channel normalisation statistics (timm/torchvision values), for
// augment.Pipeline's Mean and Std. Each call returns new slices, which the
// caller may keep or modify.

// ImageNetMeanStd is ImageNet's (0.485, 0.456, 0.406) and (0.229, 0.224, 0.225).
func ImageNetMeanStd() (mean, std []float32) {
	return []float32{0.485, 0.456, 0.406}, []float32{0.229, 0.224, 0.225}
}

// CIFAR10MeanStd is CIFAR-10's training-set mean and standard deviation.
func CIFAR10MeanStd() (mean, std []float32) {
	return []float32{0.4914, 0.4822, 0.4465}, []float32{0.2470, 0.2435, 0.2616}
}

// CIFAR100MeanStd is CIFAR-100's training-set mean and standard deviation.
func CIFAR100MeanStd() (mean, std []float32) {
	return []float32{0.5071, 0.4865, 0.4409}, []float32{0.2673, 0.2564, 0.2762}
}

// FashionMNISTMeanStd is Fashion-MNIST's training-set mean and standard
// deviation.
func FashionMNISTMeanStd() (mean, std []float32) {
	return []float32{0.2860}, []float32{0.3530}
}

// MNISTMeanStd is MNIST's training-set mean and standard deviation.
func MNISTMeanStd() (mean, std []float32) {
	return []float32{0.1307}, []float32{0.3081}
}
