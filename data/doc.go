// Package data reads image classification datasets and feeds them to the
// training loop.
//
// Datasets ([Dataset]) return one decoded image ([augment.Image], planar CHW
// float32 in [0, 1]) and its label per index. Readers:
//
//   - CIFAR-10 / CIFAR-100 in the official binary format, from the extracted
//     folder or the .tar.gz ([OpenCIFAR10], [OpenCIFAR100]);
//   - MNIST-style IDX files, gzipped or not ([OpenIDX], [FashionMNIST],
//     [MNIST]), and a 10,000/2,000 image subset of Fashion-MNIST embedded in
//     the binary ([EmbeddedFashionMNIST]);
//   - ImageNet-style class folders of JPEG and PNG files ([OpenImageFolder],
//     [OpenImageFolderSplit]);
//   - prepared sets, any of the above written once by [WritePrepared] into
//     an indexed file of resized JPEG or raw images (formats/imageshard),
//     read by [OpenPrepared] and [OpenPreparedSplit].
//
// The [Loader] draws seeded, shuffled batches, decodes and augments items on
// worker goroutines with a bounded prefetch queue and hands out reusable NCHW
// float32 [Batch] values normalised with a mean/std. Each item's random
// stream is derived from (seed, epoch, dataset index), so an epoch's batches
// are the same for any number of workers, and an epoch can start at any batch
// index for exact resume.
//
// Bad input (truncated or oversize files, wrong magic numbers, labels out of
// range, empty class folders, corrupt images) gives errors that name the file
// and the record or byte offset.
package data
