// Package viz draws pictures of a ViT and its training run as PNG files,
// with gonum/plot:
//
//   - training curves from a run folder's metrics (PlotRun): loss, top-1,
//     learning rate and throughput against the epoch;
//   - attention maps of an image (Attender, AttentionFigure): attention
//     rollout (Abnar & Zuidema, 2020) or the last layer's head-averaged
//     attention from [CLS] (and the distillation token) to the patches,
//     overlaid on the image, and the last layer's per-head maps;
//   - the cosine similarity of the position embeddings (PosEmbedSimilarity,
//     SavePosEmbedFigure), as in figure 7 of the ViT paper.
//
// The numbers behind each picture come from pure functions (Rollout,
// HeadMean, CosineSimilarity, ExtractSeries) that the drawing code only
// renders. Metrics are taken as plain records (name → value), as
// metrics.Read returns them, so this package does not depend on train.
package viz
