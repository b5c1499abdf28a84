// Package augment holds the image transforms of the training and evaluation
// pipelines, following timm and torchvision semantics (same names, defaults
// and formulas).
//
// # Images
//
// An [Image] is planar CHW float32 with values in [0, 1] (what torchvision's
// ToTensor produces), one plane per channel: pixel (c, y, x) is
// Pix[(c*H+y)*W+x]. Decoders and dataset readers produce images with values on
// the 1/255 grid; transforms keep values in [0, 1]. Normalisation with a
// mean/std happens last, in [Pipeline.Process], which writes straight into a
// batch slot; transforms that timm applies after normalisation (RandomErasing)
// run there as the pipeline's PostNorm stage.
//
// [RandAugment] works, as timm's does on PIL images, on 8-bit levels (planar
// bytes): each operation computes what PIL 9.4 computes, to the level.
// A pipeline ending in RandAugment hands it the levels of the transformed
// image, round(v·255), and normalises its levels into the batch slot in
// one pass, with a RandomErasing box written as the rows are (the same
// values, and random draws, as the steps one after another).
//
// # Transforms
//
// A [Transform] is a function of (image, rng): the same input and the same
// random stream give the same output. Apply takes ownership of its input: it
// may write into img.Pix and return img, or return a new image (taken from the
// package's buffer pool with [NewImage]) and hand the input back with
// [Recycle]. Callers must not use img after Apply. Random numbers come from
// math/rand/v2; the data loader seeds one stream per item from (seed, epoch,
// index), so results do not depend on the number of workers.
//
// Geometric transforms: [Resize], [CenterCrop], [RandomResizedCrop],
// [RandomCrop] (with padding), [HFlip]. Colour: [ColorJitter].
// Policies: [RandAugment] (timm's rand-mM-nN-mstdS-incI strings, see
// [ParseRandAugment]), [RandomErasing]. Batch level: [Mixup] (Mixup/CutMix
// with soft targets) and [OneHot] (label smoothing without mixing).
// [TrainPipeline] and [EvalPipeline] build the pipelines of timm's
// create_transform.
package augment
