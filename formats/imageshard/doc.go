// Package imageshard is the prepared data set format: the images of one
// split of a data set, each already resized and encoded once, in one file
// with a fixed-size index record per image, so that any image can be read
// with one ReadAt at any time and in any order (shuffling, sharding across
// ranks, repeated augmentation and exact resume need nothing else).
//
// Layout (all integers little-endian):
//
//	header   16 bytes   "VTIMGSHD", version (uint32, 1), 0 (uint32)
//	items    the images' bytes, back to back, item 0 first
//	index    N records of 32 bytes, item 0 first:
//	           offset   uint64  where the item's bytes start
//	           length   uint32  how many bytes it has
//	           label    uint32  class index, < len(classes)
//	           height   uint32  image height, 1…65535
//	           width    uint32  image width, 1…65535
//	           crc      uint32  CRC-32C (Castagnoli) of the item's bytes
//	           encoding uint8   1: raw uint8 planar (C, H, W); 2: JPEG
//	           reserved 3 bytes, 0
//	meta     JSON: {"source", "split", "channels", "classes", "max_side", "quality"}
//	trailer  32 bytes:
//	           index offset uint64, item count uint64, meta length uint32,
//	           CRC-32C of the index and meta bytes uint32, "VTSHDEND"
//
// Items are contiguous: item 0 starts right after the header, each item
// right after the one before, and the index right after the last. A raw
// item holds exactly channels·height·width bytes.
//
// The writer streams the items and writes the index at the end, through
// formats/atomicfile: a run killed by kill -9 or stopped by a full disk
// leaves no file (or the old one) under the name. The reader checks the
// header, the trailer, the index's checksum and every record before it
// hands out an item, and each item's CRC-32C as it reads it: a mismatch is
// an error naming the file and the item.
package imageshard
