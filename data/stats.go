package data

// Per-channel normalisation statistics (timm/torchvision values), for
// augment.Pipeline's Mean and Std. Copy them before modifying.
var (
	ImageNetMean = []float32{0.485, 0.456, 0.406}
	ImageNetStd  = []float32{0.229, 0.224, 0.225}

	CIFAR10Mean = []float32{0.4914, 0.4822, 0.4465}
	CIFAR10Std  = []float32{0.2470, 0.2435, 0.2616}

	CIFAR100Mean = []float32{0.5071, 0.4865, 0.4409}
	CIFAR100Std  = []float32{0.2673, 0.2564, 0.2762}

	FashionMNISTMean = []float32{0.2860}
	FashionMNISTStd  = []float32{0.3530}

	MNISTMean = []float32{0.1307}
	MNISTStd  = []float32{0.3081}
)
