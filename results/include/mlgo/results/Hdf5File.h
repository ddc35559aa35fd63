// A small RAII wrapper over the HDF5 C API (Debian's libhdf5 1.10, serial),
// just wide enough for mlgo-es's result files: groups, 1-D and 2-D datasets
// of float64, int64, uint64 and variable-length UTF-8 strings, extendible
// datasets that grow row by row (one row per training step), attributes, and
// listings. <hdf5.h> stays out of this header.
//
// Objects are named by absolute paths ("/steps/reward"); every call opens what
// it needs and closes it before returning, so a Hdf5File is the only handle
// a caller ever holds. Errors are values whose message names the file and
// the object path, e.g. "run.h5: /steps/reward: no such dataset"; HDF5's own
// error-stack printing is switched off and its innermost message appended
// where it helps.
//
// Threads: Debian's HDF5 is built without thread safety, so the library's
// global state must never be entered by two threads at once, whatever files
// they work on. Every operation here (including destructors) holds one
// process-wide mutex, so any thread may use any Hdf5File; calls are
// serialised. Code that calls HDF5 directly, around this wrapper, is not
// covered by that mutex and must not run concurrently with it.
#pragma once

#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace mlgo::results {

// The element types datasets and attributes hold, as C++ types.
template <class T>
concept Hdf5Element = std::is_same_v<T, double> || std::is_same_v<T, int64_t> ||
    std::is_same_v<T, uint64_t> || std::is_same_v<T, std::string>;

// What a stored value reads back as without loss: any floating-point type as
// Float64, signed integers as Int64, unsigned ones as UInt64 (an unsigned type
// narrower than 64 bits also reads as Int64), any string as String.
enum class ElementType { Float64, Int64, UInt64, String };
std::string_view elementTypeName(ElementType type); // "float64", "int64", "uint64", "string"

enum class ObjectKind { Group, Dataset, Other };
enum class OpenMode { ReadOnly, ReadWrite };

// Dimensions, outermost first: {n} for a vector, {rows, columns} for a matrix.
using Shape = std::vector<uint64_t>;

// A dataset's contents: its shape and its elements in row-major order.
template <Hdf5Element T> struct Array {
  Shape shape;
  std::vector<T> values;
};

// How an extendible dataset is stored. Appends write whole chunks, and HDF5
// caches 1 MiB of chunks per dataset, so chunks well under that keep
// row-by-row appends cheap.
struct ExtendibleOptions {
  // Rows per chunk. Unset: as many as fit in 64 KiB (at least one), which
  // suits both one row per training step and bulk appends of trajectories.
  std::optional<uint64_t> chunkRows;
  // gzip level, 0 (off) to 9. h5py and every HDF5 tool read it; costs CPU
  // on every append.
  int deflateLevel = 0;

  Status validate() const; // names the bad field
};

class Hdf5File {
public:
  // Creates `path`, replacing any file there.
  static Expected<Hdf5File> create(const std::filesystem::path& path);
  // Opens an existing HDF5 file; a missing file, a directory or a file that
  // is not HDF5 is an error naming it.
  static Expected<Hdf5File> open(const std::filesystem::path& path, OpenMode mode);

  Hdf5File(Hdf5File&& other) noexcept;
  Hdf5File& operator=(Hdf5File&& other) noexcept;
  Hdf5File(const Hdf5File&) = delete;
  Hdf5File& operator=(const Hdf5File&) = delete;
  // Closes the file if still open; errors are lost (call close() to see them).
  ~Hdf5File();

  const std::filesystem::path& path() const { return path_; }
  bool isOpen() const { return id_ >= 0; }
  bool writable() const { return writable_; }

  // --- Structure -----------------------------------------------------------

  // Creates the group and any missing parents; an existing group is fine.
  Status createGroup(std::string_view path);
  // What `path` names, or nullopt if nothing (including when a parent is
  // missing or is not a group).
  std::optional<ObjectKind> objectKind(std::string_view path) const;
  bool exists(std::string_view path) const { return objectKind(path).has_value(); }
  // The names of a group's direct children, sorted by name.
  Expected<std::vector<std::string>> children(std::string_view groupPath) const;

  // --- Fixed-size datasets -------------------------------------------------

  // Creates a dataset of `shape` (rank 1 or more; dimensions may be 0) holding
  // `values` in row-major order, and any missing parent groups. The dataset
  // must not exist yet. Strings are stored as variable-length UTF-8 and must
  // not contain NUL characters.
  template <Hdf5Element T>
  Status writeDataset(std::string_view path, const Shape& shape, std::span<const T> values);
  // A 1-D dataset of `values`.
  template <Hdf5Element T> Status writeDataset(std::string_view path, std::span<const T> values) {
    return writeDataset<T>(path, Shape{values.size()}, values);
  }

  // Reads a whole dataset (fixed-size or extendible). Its stored type must
  // read as T without loss (see ElementType); strings may be variable- or
  // fixed-length.
  template <Hdf5Element T> Expected<Array<T>> readDataset(std::string_view path) const;
  // Reads a dataset that must be 1-D.
  template <Hdf5Element T> Expected<std::vector<T>> readVector(std::string_view path) const;

  Expected<Shape> datasetShape(std::string_view path) const;
  Expected<ElementType> datasetType(std::string_view path) const;

  // --- Extendible datasets -------------------------------------------------

  // Creates an empty dataset that grows along its first dimension. Each row
  // has `rowShape`: {} makes a 1-D dataset [N] of scalars, {c} a 2-D dataset
  // [N, c]. Row dimensions must be at least 1. Missing parents are created.
  template <Hdf5Element T>
  Status createExtendibleDataset(std::string_view path, const Shape& rowShape,
                                 const ExtendibleOptions& options = {});
  // Appends values.size() / rowWidth rows (rowWidth: the product of the row
  // dimensions) to an extendible dataset; values.size() must be a multiple
  // of rowWidth. Appending nothing is fine.
  template <Hdf5Element T> Status appendRows(std::string_view path, std::span<const T> values);

  // --- Attributes ----------------------------------------------------------
  // On the file ("/"), a group or a dataset. Scalars only.

  // Writes the attribute, replacing any attribute of that name.
  template <Hdf5Element T>
  Status writeAttribute(std::string_view objectPath, std::string_view name, const T& value);
  Status writeAttribute(std::string_view objectPath, std::string_view name, const char* value) {
    return writeAttribute<std::string>(objectPath, name, std::string(value));
  }
  template <Hdf5Element T>
  Expected<T> readAttribute(std::string_view objectPath, std::string_view name) const;
  Expected<bool> hasAttribute(std::string_view objectPath, std::string_view name) const;
  Expected<ElementType> attributeType(std::string_view objectPath, std::string_view name) const;
  // Sorted by name.
  Expected<std::vector<std::string>> attributeNames(std::string_view objectPath) const;

  // --- File ----------------------------------------------------------------

  // Writes everything buffered to disk; the file stays open.
  Status flush();
  // Closes the file; later calls on this object are errors. Closing a
  // closed file is fine.
  Status close();

private:
  Hdf5File(int64_t id, std::filesystem::path path, bool writable)
      : id_(id), path_(std::move(path)), writable_(writable) {}

  int64_t id_ = -1; // hid_t; -1 when closed or moved from
  std::filesystem::path path_;
  bool writable_ = false;
};

} // namespace mlgo::results
