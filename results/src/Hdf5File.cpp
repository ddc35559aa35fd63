#include "mlgo/results/Hdf5File.h"

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <numeric>
#include <utility>

namespace fs = std::filesystem;

namespace mlgo::results {

static_assert(std::is_same_v<hid_t, int64_t>, "Hdf5File stores hid_t as int64_t (HDF5 >= 1.10)");

namespace {

// --- Locking and HDF5's error stack -----------------------------------------

std::recursive_mutex& hdf5Mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

// Held by every entry point (see the header's note on threads). Recursive so
// that entry points may call each other.
class Hdf5Lock {
public:
  Hdf5Lock() : lock_(hdf5Mutex()) {
    // No HDF5 clean-up at exit: every file is closed by its owner, and a file
    // whose close failed (a full disk, a file-size limit) stays in HDF5's
    // table, where its exit-time close flushes again and crashes
    // (H5F__close_cb) after main has reported the error. Must come before
    // any other HDF5 call, hence here, once.
    static const bool noCleanupAtExit = [] { return H5dont_atexit() >= 0; }();
    (void)noCleanupAtExit;
    // Errors come back as values; HDF5 must not print its stack to stderr.
    // Cheap, and correct even in a thread-safe build (where it is per thread).
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }

private:
  std::lock_guard<std::recursive_mutex> lock_;
};

herr_t collectErrorDescription(unsigned, const H5E_error2_t* error, void* data) {
  auto* descriptions = static_cast<std::vector<std::string>*>(data);
  if (error->desc && *error->desc)
    descriptions->emplace_back(error->desc);
  return 0;
}

// The innermost description on HDF5's error stack (the most specific one,
// e.g. "file signature not found"), and clears the stack.
std::string takeHdf5Detail() {
  std::vector<std::string> descriptions;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collectErrorDescription, &descriptions);
  H5Eclear2(H5E_DEFAULT);
  if (descriptions.empty()) // HDF5 said nothing; the system's last word may help
    return errno != 0
               ? std::string("unknown HDF5 error; last system error: ") + std::strerror(errno)
               : std::string("unknown HDF5 error");
  // A failed write(2) comes as "file write failed: time = …, errno = 28,
  // error message = 'No space left on device', buf = …": keep what it says.
  std::string detail = descriptions.back();
  static constexpr std::string_view kSystemMessage = "error message = '";
  if (size_t start = detail.find(kSystemMessage); start != std::string::npos) {
    start += kSystemMessage.size();
    size_t end = detail.find('\'', start);
    std::string what = detail.substr(0, std::min(detail.find(':'), detail.size()));
    return what + ": " + detail.substr(start, end == std::string::npos ? end : end - start);
  }
  return detail;
}

// An owned HDF5 identifier of any kind, closed with its own close function.
class Id {
public:
  using Closer = herr_t (*)(hid_t);
  Id() = default;
  Id(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Id(Id&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Id& operator=(Id&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      closer_ = other.closer_;
    }
    return *this;
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  ~Id() { reset(); }

  bool valid() const { return id_ >= 0; }
  hid_t get() const { return id_; }

private:
  void reset() {
    if (id_ >= 0 && closer_)
      closer_(id_);
    id_ = H5I_INVALID_HID;
  }
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// Where an operation happens, for its error messages: "file: /path: what".
struct Place {
  const fs::path& file;
  std::string_view object;

  Error error(std::string_view what) const {
    std::string message = file.string() + ": ";
    if (!object.empty())
      message += std::string(object) + ": ";
    return makeError(message + std::string(what));
  }
  // `what` followed by HDF5's own explanation (which this clears).
  Error hdf5Error(std::string_view what) const {
    return error(std::string(what) + " (" + takeHdf5Detail() + ")");
  }
};

std::string describeShape(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

uint64_t product(std::span<const uint64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), uint64_t{1}, std::multiplies<>());
}

// --- Element types ----------------------------------------------------------

Id copyType(hid_t type) {
  return Id(H5Tcopy(type), H5Tclose);
}

Id variableStringType(H5T_cset_t charset) {
  Id type = copyType(H5T_C_S1);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), charset);
  return type;
}

// How T is stored in files (explicitly little-endian, like h5py writes).
template <Hdf5Element T> Id fileType() {
  if constexpr (std::is_same_v<T, double>)
    return copyType(H5T_IEEE_F64LE);
  else if constexpr (std::is_same_v<T, int64_t>)
    return copyType(H5T_STD_I64LE);
  else if constexpr (std::is_same_v<T, uint64_t>)
    return copyType(H5T_STD_U64LE);
  else
    return variableStringType(H5T_CSET_UTF8);
}

// How T is laid out in memory (numbers only; strings depend on the file type).
template <Hdf5Element T> Id memoryType() {
  if constexpr (std::is_same_v<T, double>)
    return copyType(H5T_NATIVE_DOUBLE);
  else if constexpr (std::is_same_v<T, int64_t>)
    return copyType(H5T_NATIVE_INT64);
  else if constexpr (std::is_same_v<T, uint64_t>)
    return copyType(H5T_NATIVE_UINT64);
  else
    return variableStringType(H5T_CSET_UTF8);
}

template <Hdf5Element T> ElementType elementTypeOf() {
  if constexpr (std::is_same_v<T, double>)
    return ElementType::Float64;
  else if constexpr (std::is_same_v<T, int64_t>)
    return ElementType::Int64;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return ElementType::UInt64;
  else
    return ElementType::String;
}

// "float32", "uint16", "string", "compound", … for messages.
std::string describeType(hid_t type) {
  size_t bytes = H5Tget_size(type);
  switch (H5Tget_class(type)) {
  case H5T_FLOAT:
    return "float" + std::to_string(8 * bytes);
  case H5T_INTEGER:
    return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + std::to_string(8 * bytes);
  case H5T_STRING:
    return "string";
  case H5T_COMPOUND:
    return "compound";
  case H5T_ENUM:
    return "enum";
  case H5T_ARRAY:
    return "array";
  case H5T_VLEN:
    return "vlen";
  case H5T_OPAQUE:
    return "opaque";
  case H5T_REFERENCE:
    return "reference";
  default:
    return "unknown type";
  }
}

std::optional<ElementType> classify(hid_t type) {
  switch (H5Tget_class(type)) {
  case H5T_FLOAT:
    return ElementType::Float64;
  case H5T_INTEGER:
    return H5Tget_sign(type) == H5T_SGN_NONE ? ElementType::UInt64 : ElementType::Int64;
  case H5T_STRING:
    return ElementType::String;
  default:
    return std::nullopt;
  }
}

// Whether values of the stored `type` read as T without loss.
template <Hdf5Element T> bool readableAs(hid_t type) {
  H5T_class_t typeClass = H5Tget_class(type);
  if constexpr (std::is_same_v<T, double>)
    return typeClass == H5T_FLOAT;
  else if constexpr (std::is_same_v<T, int64_t>)
    return typeClass == H5T_INTEGER &&
           (H5Tget_sign(type) != H5T_SGN_NONE || H5Tget_size(type) < sizeof(int64_t));
  else if constexpr (std::is_same_v<T, uint64_t>)
    return typeClass == H5T_INTEGER && H5Tget_sign(type) == H5T_SGN_NONE;
  else
    return typeClass == H5T_STRING;
}

template <Hdf5Element T> Status checkReadable(const Place& place, hid_t type) {
  if (readableAs<T>(type))
    return Status::ok();
  return place.error("holds " + describeType(type) + " values, not " +
                     std::string(elementTypeName(elementTypeOf<T>())));
}

Status checkNoNul(const Place& place, std::span<const std::string> values) {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].find('\0') != std::string::npos)
      return place.error("string " + std::to_string(i) +
                         " contains a NUL character, which HDF5 strings cannot hold");
  return Status::ok();
}

// Writes `values` through `write(memoryType, buffer)` (H5Dwrite or H5Awrite).
template <Hdf5Element T, class Write> herr_t writeValues(std::span<const T> values, Write write) {
  Id type = memoryType<T>();
  if constexpr (std::is_same_v<T, std::string>) {
    std::vector<const char*> pointers(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      pointers[i] = values[i].c_str();
    return write(type.get(), pointers.data());
  } else {
    return write(type.get(), values.data());
  }
}

// Reads `count` values of the stored `storedType` through
// `read(memoryType, buffer)` (H5Dread or H5Aread); `space` describes the
// selection read (needed to free variable-length strings).
template <Hdf5Element T, class Read>
Expected<std::vector<T>> readValues(const Place& place, hid_t storedType, hid_t space, size_t count,
                                    Read read) {
  if (Status readable = checkReadable<T>(place, storedType); !readable)
    return readable.error();
  std::vector<T> values(count);
  if (count == 0)
    return values;
  if constexpr (std::is_same_v<T, std::string>) {
    htri_t variable = H5Tis_variable_str(storedType);
    if (variable < 0)
      return place.hdf5Error("cannot inspect the string type");
    if (variable > 0) {
      Id type = variableStringType(H5Tget_cset(storedType));
      std::vector<char*> pointers(count, nullptr);
      if (read(type.get(), pointers.data()) < 0)
        return place.hdf5Error("cannot read");
      for (size_t i = 0; i < count; ++i)
        if (pointers[i])
          values[i] = pointers[i];
#if H5_VERSION_GE(1, 12, 0)
      H5Treclaim(type.get(), space, H5P_DEFAULT, pointers.data());
#else
      H5Dvlen_reclaim(type.get(), space, H5P_DEFAULT, pointers.data());
#endif
    } else {
      // Fixed-length strings (e.g. numpy bytes written by h5py): read the
      // raw bytes, then drop the padding.
      size_t width = H5Tget_size(storedType);
      Id type = copyType(storedType);
      std::vector<char> bytes(count * width);
      if (read(type.get(), bytes.data()) < 0)
        return place.hdf5Error("cannot read");
      bool spacePadded = H5Tget_strpad(storedType) == H5T_STR_SPACEPAD;
      for (size_t i = 0; i < count; ++i) {
        std::string_view text(bytes.data() + i * width, width);
        text = text.substr(0, text.find('\0'));
        if (spacePadded)
          while (!text.empty() && text.back() == ' ')
            text.remove_suffix(1);
        values[i] = std::string(text);
      }
    }
  } else {
    Id type = memoryType<T>();
    if (read(type.get(), values.data()) < 0)
      return place.hdf5Error("cannot read");
  }
  return values;
}

// --- Paths and objects -----------------------------------------------------

Status checkObjectPath(const Place& place) {
  std::string_view path = place.object;
  if (path.empty() || path.front() != '/')
    return place.error("object paths must be absolute (start with '/')");
  if (path == "/")
    return Status::ok();
  if (path.back() == '/' || path.find("//") != std::string_view::npos)
    return place.error("object path has an empty component");
  return Status::ok();
}

std::optional<ObjectKind> kindOf(hid_t file, std::string_view path) {
  if (path == "/")
    return ObjectKind::Group;
  // H5Lexists needs every parent to exist, so walk down one link at a time.
  size_t end = 0;
  do {
    end = path.find('/', end + 1);
    std::string prefix(path.substr(0, end));
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return std::nullopt;
    }
  } while (end != std::string_view::npos);
  Id object(H5Oopen(file, std::string(path).c_str(), H5P_DEFAULT), H5Oclose);
  if (!object.valid()) { // e.g. a dangling soft link
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  switch (H5Iget_type(object.get())) {
  case H5I_GROUP:
    return ObjectKind::Group;
  case H5I_DATASET:
    return ObjectKind::Dataset;
  default:
    return ObjectKind::Other;
  }
}

std::string_view kindName(ObjectKind kind) {
  switch (kind) {
  case ObjectKind::Group:
    return "group";
  case ObjectKind::Dataset:
    return "dataset";
  case ObjectKind::Other:
    return "named datatype";
  }
  return "object";
}

// Opens the object at `place` with `open`; on failure, says why: no such
// object, an object of another kind than `wanted` (nullopt: any kind), or
// HDF5's own reason.
Expected<Id> openAs(hid_t file, const Place& place, hid_t (*open)(hid_t, const char*, hid_t),
                    Id::Closer close, std::optional<ObjectKind> wanted, const char* what) {
  if (Status valid = checkObjectPath(place); !valid)
    return valid.error();
  // Open first (the common case, and the fast one); explain a failure after.
  Id object(open(file, std::string(place.object).c_str(), H5P_DEFAULT), close);
  if (object.valid())
    return object;
  std::string detail = takeHdf5Detail();
  std::optional<ObjectKind> kind = kindOf(file, place.object);
  if (!kind)
    return place.error(std::string("no such ") + what);
  if (wanted && *kind != *wanted)
    return place.error("is a " + std::string(kindName(*kind)) + ", not a " + what);
  return place.error(std::string("cannot open ") + what + " (" + detail + ")");
}

Expected<Id> openDataset(hid_t file, const Place& place) {
  return openAs(file, place, H5Dopen2, H5Dclose, ObjectKind::Dataset, "dataset");
}

Expected<Id> openGroup(hid_t file, const Place& place) {
  return openAs(file, place, H5Gopen2, H5Gclose, ObjectKind::Group, "group");
}

// A group, dataset or named datatype, for attributes.
Expected<Id> openObject(hid_t file, const Place& place) {
  return openAs(file, place, H5Oopen, H5Oclose, std::nullopt, "object");
}

// Link creation that makes missing parent groups.
Id linkCreationWithParents() {
  Id list(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(list.get(), 1);
  return list;
}

Expected<Shape> spaceShape(const Place& place, hid_t space, Shape* maxShape = nullptr) {
  int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0)
    return place.hdf5Error("cannot read the dataspace");
  std::vector<hsize_t> dims(rank), maxDims(rank);
  if (rank > 0 && H5Sget_simple_extent_dims(space, dims.data(), maxDims.data()) < 0)
    return place.hdf5Error("cannot read the dataspace");
  if (maxShape)
    maxShape->assign(maxDims.begin(), maxDims.end());
  return Shape(dims.begin(), dims.end());
}

Id fileAccessList() {
  Id list(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  // Closing the file closes everything in it, so the file is really closed
  // (and other processes, e.g. h5py, can open it) once close() returns.
  H5Pset_fclose_degree(list.get(), H5F_CLOSE_STRONG);
#if H5_VERSION_GE(1, 10, 7)
  // Lock where the file system can, but do not fail where it cannot (NFS).
  H5Pset_file_locking(list.get(), true, true);
#endif
  return list;
}

Status checkUsable(const Place& place, hid_t id, bool needWritable, bool writable) {
  if (id < 0)
    return place.error("file is closed");
  if (needWritable && !writable)
    return place.error("file is open read-only");
  return Status::ok();
}

herr_t collectLinkName(hid_t, const char* name, const H5L_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

herr_t collectAttributeName(hid_t, const char* name, const H5A_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

} // namespace

std::string_view elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::Float64:
    return "float64";
  case ElementType::Int64:
    return "int64";
  case ElementType::UInt64:
    return "uint64";
  case ElementType::String:
    return "string";
  }
  return "unknown";
}

Status ExtendibleOptions::validate() const {
  if (chunkRows && *chunkRows == 0)
    return makeError("chunkRows: must be at least 1 (got 0)");
  if (deflateLevel < 0 || deflateLevel > 9)
    return makeError("deflateLevel: must be 0 to 9 (got " + std::to_string(deflateLevel) + ")");
  return Status::ok();
}

// --- File ---------------------------------------------------------------------

Expected<Hdf5File> Hdf5File::create(const fs::path& path) {
  Hdf5Lock lock;
  Place place{path, {}};
  std::error_code ec;
  fs::path parent = path.parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec))
    return place.error("cannot create: no directory " + parent.string());
  Id access = fileAccessList();
  hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get());
  if (id < 0)
    return place.hdf5Error("cannot create");
  return Hdf5File(id, path, true);
}

Expected<Hdf5File> Hdf5File::open(const fs::path& path, OpenMode mode) {
  Hdf5Lock lock;
  Place place{path, {}};
  std::error_code ec;
  if (!fs::exists(path, ec))
    return place.error("no such file");
  if (fs::is_directory(path, ec))
    return place.error("is a directory, not an HDF5 file");
  htri_t isHdf5 = H5Fis_hdf5(path.c_str());
  if (isHdf5 < 0)
    return place.hdf5Error("cannot read");
  if (isHdf5 == 0)
    return place.error("not an HDF5 file");
  Id access = fileAccessList();
  bool writable = mode == OpenMode::ReadWrite;
  hid_t id = H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, access.get());
  if (id < 0)
    return place.hdf5Error(writable ? "cannot open for writing" : "cannot open");
  return Hdf5File(id, path, writable);
}

Hdf5File::Hdf5File(Hdf5File&& other) noexcept
    : id_(std::exchange(other.id_, -1)), path_(std::move(other.path_)), writable_(other.writable_) {
}

Hdf5File& Hdf5File::operator=(Hdf5File&& other) noexcept {
  if (this != &other) {
    (void)close();
    id_ = std::exchange(other.id_, -1);
    path_ = std::move(other.path_);
    writable_ = other.writable_;
  }
  return *this;
}

Hdf5File::~Hdf5File() {
  (void)close();
}

Status Hdf5File::flush() {
  Hdf5Lock lock;
  Place place{path_, {}};
  if (Status usable = checkUsable(place, id_, false, writable_); !usable)
    return usable;
  if (H5Fflush(id_, H5F_SCOPE_GLOBAL) < 0)
    return place.hdf5Error("cannot flush");
  return Status::ok();
}

Status Hdf5File::close() {
  if (id_ < 0)
    return Status::ok();
  Hdf5Lock lock;
  herr_t closed = H5Fclose(std::exchange(id_, -1));
  if (closed < 0)
    return Place{path_, {}}.hdf5Error("cannot close");
  return Status::ok();
}

// --- Structure ----------------------------------------------------------------

Status Hdf5File::createGroup(std::string_view path) {
  Hdf5Lock lock;
  Place place{path_, path};
  if (Status usable = checkUsable(place, id_, true, writable_); !usable)
    return usable;
  if (Status valid = checkObjectPath(place); !valid)
    return valid;
  if (std::optional<ObjectKind> kind = kindOf(id_, path)) {
    if (*kind == ObjectKind::Group)
      return Status::ok();
    return place.error("exists and is a " + std::string(kindName(*kind)) + ", not a group");
  }
  Id links = linkCreationWithParents();
  Id group(H5Gcreate2(id_, std::string(path).c_str(), links.get(), H5P_DEFAULT, H5P_DEFAULT),
           H5Gclose);
  if (!group.valid())
    return place.hdf5Error("cannot create group");
  return Status::ok();
}

std::optional<ObjectKind> Hdf5File::objectKind(std::string_view path) const {
  Hdf5Lock lock;
  Place place{path_, path};
  if (id_ < 0 || !checkObjectPath(place))
    return std::nullopt;
  return kindOf(id_, path);
}

Expected<std::vector<std::string>> Hdf5File::children(std::string_view groupPath) const {
  Hdf5Lock lock;
  Place place{path_, groupPath};
  if (Status usable = checkUsable(place, id_, false, writable_); !usable)
    return usable.error();
  MLGO_ASSIGN_OR_RETURN(const Id group, openGroup(id_, place));
  std::vector<std::string> names;
  if (H5Literate(group.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collectLinkName, &names) < 0)
    return place.hdf5Error("cannot list the group");
  std::sort(names.begin(), names.end());
  return names;
}

// --- Datasets -----------------------------------------------------------------

template <Hdf5Element T>
Status Hdf5File::writeDataset(std::string_view path, const Shape& shape,
                              std::span<const T> values) {
  Hdf5Lock lock;
  Place place{path_, path};
  if (Status usable = checkUsable(place, id_, true, writable_); !usable)
    return usable;
  if (Status valid = checkObjectPath(place); !valid)
    return valid;
  if (shape.empty())
    return place.error("a dataset needs at least one dimension");
  if (product(shape) != values.size())
    return place.error("shape " + describeShape(shape) + " holds " +
                       std::to_string(product(shape)) + " values, got " +
                       std::to_string(values.size()));
  if constexpr (std::is_same_v<T, std::string>)
    if (Status clean = checkNoNul(place, values); !clean)
      return clean;
  if (kindOf(id_, path))
    return place.error("already exists");

  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Id space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  Id type = fileType<T>();
  Id links = linkCreationWithParents();
  Id dataset(H5Dcreate2(id_, std::string(path).c_str(), type.get(), space.get(), links.get(),
                        H5P_DEFAULT, H5P_DEFAULT),
             H5Dclose);
  if (!space.valid() || !dataset.valid())
    return place.hdf5Error("cannot create dataset");
  if (values.empty())
    return Status::ok();
  // The lambdas here capture plain hid_t, not Id (whose type is internal).
  hid_t datasetId = dataset.get();
  herr_t written = writeValues<T>(values, [datasetId](hid_t memory, const void* buffer) {
    return H5Dwrite(datasetId, memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer);
  });
  if (written < 0)
    return place.hdf5Error("cannot write");
  return Status::ok();
}

template <Hdf5Element T> Expected<Array<T>> Hdf5File::readDataset(std::string_view path) const {
  Hdf5Lock lock;
  Place place{path_, path};
  if (Status usable = checkUsable(place, id_, false, writable_); !usable)
    return usable.error();
  MLGO_ASSIGN_OR_RETURN(const Id dataset, openDataset(id_, place));
  Id type(H5Dget_type(dataset.get()), H5Tclose);
  Id space(H5Dget_space(dataset.get()), H5Sclose);
  if (!type.valid() || !space.valid())
    return place.hdf5Error("cannot inspect dataset");
  Expected<Shape> shape = spaceShape(place, space.get());
  if (!shape)
    return shape.error();
  Expected<std::vector<T>> values =
      readValues<T>(place, type.get(), space.get(), product(*shape),
                    [datasetId = dataset.get()](hid_t memory, void* buffer) {
                      return H5Dread(datasetId, memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer);
                    });
  if (!values)
    return values.error();
  return Array<T>{shape.take(), values.take()};
}

template <Hdf5Element T>
Expected<std::vector<T>> Hdf5File::readVector(std::string_view path) const {
  Expected<Array<T>> array = readDataset<T>(path);
  if (!array)
    return array.error();
  if (array->shape.size() != 1)
    return Place{path_, path}.error("expected a 1-D dataset, found shape " +
                                    describeShape(array->shape));
  return std::move(array->values);
}

Expected<Shape> Hdf5File::datasetShape(std::string_view path) const {
  Hdf5Lock lock;
  Place place{path_, path};
  if (Status usable = checkUsable(place, id_, false, writable_); !usable)
    return usable.error();
  MLGO_ASSIGN_OR_RETURN(const Id dataset, openDataset(id_, place));
  Id space(H5Dget_space(dataset.get()), H5Sclose);
  if (!space.valid())
    return place.hdf5Error("cannot inspect dataset");
  return spaceShape(place, space.get());
}

Expected<ElementType> Hdf5File::datasetType(std::string_view path) const {
  Hdf5Lock lock;
  Place place{path_, path};
  if (Status usable = checkUsable(place, id_, false, writable_); !usable)
    return usable.error();
  MLGO_ASSIGN_OR_RETURN(const Id dataset, openDataset(id_, place));
  Id type(H5Dget_type(dataset.get()), H5Tclose);
  if (!type.valid())
    return place.hdf5Error("cannot inspect dataset");
  if (std::optional<ElementType> element = classify(type.get()))
    return *element;
  return place.error("holds " + describeType(type.get()) + " values, which are not supported");
}

template <Hdf5Element T>
Status Hdf5File::createExtendibleDataset(std::string_view path, const Shape& rowShape,
                                         const ExtendibleOptions& options) {
  Hdf5Lock lock;
  Place place{path_, path};
  if (Status usable = checkUsable(place, id_, true, writable_); !usable)
    return usable;
  if (Status valid = checkObjectPath(place); !valid)
    return valid;
  if (Status valid = options.validate(); !valid)
    return place.error(valid.error().message);
  for (uint64_t dim : rowShape)
    if (dim == 0)
      return place.error("row shape " + describeShape(rowShape) + " has an empty dimension");
  if (options.deflateLevel > 0 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0)
    return place.error("this HDF5 library has no deflate (gzip) filter");
  if (kindOf(id_, path))
    return place.error("already exists");

  // A variable-length string is stored as a 16-byte reference to the heap.
  constexpr uint64_t elementBytes = std::is_same_v<T, std::string> ? 16 : sizeof(T);
  constexpr uint64_t targetChunkBytes = 64 * 1024;
  uint64_t rowBytes = product(rowShape) * elementBytes;
  uint64_t chunkRows =
      options.chunkRows.value_or(std::max<uint64_t>(1, targetChunkBytes / rowBytes));

  std::vector<hsize_t> dims{0}, maxDims{H5S_UNLIMITED}, chunk{chunkRows};
  for (uint64_t dim : rowShape) {
    dims.push_back(dim);
    maxDims.push_back(dim);
    chunk.push_back(dim);
  }
  int rank = static_cast<int>(dims.size());
  Id space(H5Screate_simple(rank, dims.data(), maxDims.data()), H5Sclose);
  Id creation(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!space.valid() || !creation.valid() || H5Pset_chunk(creation.get(), rank, chunk.data()) < 0)
    return place.hdf5Error("cannot set up an extendible dataset");
  if (options.deflateLevel > 0 &&
      H5Pset_deflate(creation.get(), static_cast<unsigned>(options.deflateLevel)) < 0)
    return place.hdf5Error("cannot enable deflate");
  Id type = fileType<T>();
  Id links = linkCreationWithParents();
  Id dataset(H5Dcreate2(id_, std::string(path).c_str(), type.get(), space.get(), links.get(),
                        creation.get(), H5P_DEFAULT),
             H5Dclose);
  if (!dataset.valid())
    return place.hdf5Error("cannot create dataset");
  return Status::ok();
}

template <Hdf5Element T>
Status Hdf5File::appendRows(std::string_view path, std::span<const T> values) {
  Hdf5Lock lock;
  Place place{path_, path};
  if (Status usable = checkUsable(place, id_, true, writable_); !usable)
    return usable;
  MLGO_ASSIGN_OR_RETURN(const Id dataset, openDataset(id_, place));
  Id type(H5Dget_type(dataset.get()), H5Tclose);
  Id space(H5Dget_space(dataset.get()), H5Sclose);
  if (!type.valid() || !space.valid())
    return place.hdf5Error("cannot inspect dataset");
  if (Status matches = checkReadable<T>(place, type.get()); !matches)
    return matches;
  Shape maxShape;
  Expected<Shape> shape = spaceShape(place, space.get(), &maxShape);
  if (!shape)
    return shape.error();
  if (shape->empty() || maxShape[0] != H5S_UNLIMITED)
    return place.error("is not extendible (create it with createExtendibleDataset)");
  uint64_t rowWidth = product(std::span(*shape).subspan(1));
  if (values.size() % rowWidth != 0)
    return place.error(std::to_string(values.size()) + " values are not whole rows of " +
                       std::to_string(rowWidth));
  if constexpr (std::is_same_v<T, std::string>)
    if (Status clean = checkNoNul(place, values); !clean)
      return clean;
  uint64_t rows = values.size() / rowWidth;
  if (rows == 0)
    return Status::ok();

  std::vector<hsize_t> oldDims(shape->begin(), shape->end());
  std::vector<hsize_t> newDims = oldDims;
  newDims[0] += rows;
  if (H5Dset_extent(dataset.get(), newDims.data()) < 0)
    return place.hdf5Error("cannot extend");
  Id fileSpace(H5Dget_space(dataset.get()), H5Sclose);
  std::vector<hsize_t> start(newDims.size(), 0), count = newDims;
  start[0] = oldDims[0];
  count[0] = rows;
  hsize_t total = values.size();
  Id memorySpace(H5Screate_simple(1, &total, nullptr), H5Sclose);
  herr_t written = -1;
  if (fileSpace.valid() && memorySpace.valid() &&
      H5Sselect_hyperslab(fileSpace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                          nullptr) >= 0)
    written =
        writeValues<T>(values, [datasetId = dataset.get(), memorySpaceId = memorySpace.get(),
                                fileSpaceId = fileSpace.get()](hid_t memory, const void* buffer) {
          return H5Dwrite(datasetId, memory, memorySpaceId, fileSpaceId, H5P_DEFAULT, buffer);
        });
  if (written < 0) {
    Error error = place.hdf5Error("cannot append " + std::to_string(rows) + " rows");
    H5Dset_extent(dataset.get(), oldDims.data()); // leave no half-written rows behind
    H5Eclear2(H5E_DEFAULT);
    return error;
  }
  return Status::ok();
}

// --- Attributes ---------------------------------------------------------------

template <Hdf5Element T>
Status Hdf5File::writeAttribute(std::string_view objectPath, std::string_view name,
                                const T& value) {
  Hdf5Lock lock;
  std::string where = std::string(objectPath) + ": attribute \"" + std::string(name) + "\"";
  Place place{path_, objectPath};
  Place attributePlace{path_, where};
  if (Status usable = checkUsable(place, id_, true, writable_); !usable)
    return usable;
  if (name.empty())
    return place.error("attribute names must not be empty");
  if constexpr (std::is_same_v<T, std::string>)
    if (Status clean = checkNoNul(attributePlace, std::span(&value, 1)); !clean)
      return clean;
  MLGO_ASSIGN_OR_RETURN(const Id object, openObject(id_, place));
  std::string attributeName(name);
  htri_t exists = H5Aexists(object.get(), attributeName.c_str());
  if (exists < 0 || (exists > 0 && H5Adelete(object.get(), attributeName.c_str()) < 0))
    return attributePlace.hdf5Error("cannot replace");
  Id space(H5Screate(H5S_SCALAR), H5Sclose);
  Id type = fileType<T>();
  Id attribute(H5Acreate2(object.get(), attributeName.c_str(), type.get(), space.get(), H5P_DEFAULT,
                          H5P_DEFAULT),
               H5Aclose);
  if (!attribute.valid())
    return attributePlace.hdf5Error("cannot create");
  herr_t written = writeValues<T>(
      std::span(&value, 1), [attributeId = attribute.get()](hid_t memory, const void* buffer) {
        return H5Awrite(attributeId, memory, buffer);
      });
  if (written < 0)
    return attributePlace.hdf5Error("cannot write");
  return Status::ok();
}

namespace {

Expected<Id> openAttribute(hid_t file, const Place& objectPlace, const Place& attributePlace,
                           const std::string& name) {
  MLGO_ASSIGN_OR_RETURN(const Id object, openObject(file, objectPlace));
  htri_t exists = H5Aexists(object.get(), name.c_str());
  if (exists < 0)
    return attributePlace.hdf5Error("cannot look up");
  if (exists == 0)
    return attributePlace.error("no such attribute");
  Id attribute(H5Aopen(object.get(), name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attribute.valid())
    return attributePlace.hdf5Error("cannot open");
  return attribute;
}

} // namespace

template <Hdf5Element T>
Expected<T> Hdf5File::readAttribute(std::string_view objectPath, std::string_view name) const {
  Hdf5Lock lock;
  std::string where = std::string(objectPath) + ": attribute \"" + std::string(name) + "\"";
  Place place{path_, objectPath};
  Place attributePlace{path_, where};
  if (Status usable = checkUsable(place, id_, false, writable_); !usable)
    return usable.error();
  MLGO_ASSIGN_OR_RETURN(const Id attribute,
                        openAttribute(id_, place, attributePlace, std::string(name)));
  Id type(H5Aget_type(attribute.get()), H5Tclose);
  Id space(H5Aget_space(attribute.get()), H5Sclose);
  if (!type.valid() || !space.valid())
    return attributePlace.hdf5Error("cannot inspect");
  hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count != 1)
    return attributePlace.error("holds " + std::to_string(count) + " values, not one");
  Expected<std::vector<T>> values =
      readValues<T>(attributePlace, type.get(), space.get(), 1,
                    [attributeId = attribute.get()](hid_t memory, void* buffer) {
                      return H5Aread(attributeId, memory, buffer);
                    });
  if (!values)
    return values.error();
  return std::move((*values)[0]);
}

Expected<bool> Hdf5File::hasAttribute(std::string_view objectPath, std::string_view name) const {
  Hdf5Lock lock;
  Place place{path_, objectPath};
  if (Status usable = checkUsable(place, id_, false, writable_); !usable)
    return usable.error();
  MLGO_ASSIGN_OR_RETURN(const Id object, openObject(id_, place));
  htri_t exists = H5Aexists(object.get(), std::string(name).c_str());
  if (exists < 0)
    return place.hdf5Error("cannot look up attribute \"" + std::string(name) + "\"");
  return exists > 0;
}

Expected<ElementType> Hdf5File::attributeType(std::string_view objectPath,
                                              std::string_view name) const {
  Hdf5Lock lock;
  std::string where = std::string(objectPath) + ": attribute \"" + std::string(name) + "\"";
  Place place{path_, objectPath};
  Place attributePlace{path_, where};
  if (Status usable = checkUsable(place, id_, false, writable_); !usable)
    return usable.error();
  MLGO_ASSIGN_OR_RETURN(const Id attribute,
                        openAttribute(id_, place, attributePlace, std::string(name)));
  Id type(H5Aget_type(attribute.get()), H5Tclose);
  if (!type.valid())
    return attributePlace.hdf5Error("cannot inspect");
  if (std::optional<ElementType> element = classify(type.get()))
    return *element;
  return attributePlace.error("holds " + describeType(type.get()) +
                              " values, which are not supported");
}

Expected<std::vector<std::string>> Hdf5File::attributeNames(std::string_view objectPath) const {
  Hdf5Lock lock;
  Place place{path_, objectPath};
  if (Status usable = checkUsable(place, id_, false, writable_); !usable)
    return usable.error();
  MLGO_ASSIGN_OR_RETURN(const Id object, openObject(id_, place));
  std::vector<std::string> names;
  if (H5Aiterate2(object.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collectAttributeName, &names) <
      0)
    return place.hdf5Error("cannot list attributes");
  std::sort(names.begin(), names.end());
  return names;
}

// --- Instantiations -----------------------------------------------------------

#define MLGO_HDF5_INSTANTIATE(T)                                                                   \
  template Status Hdf5File::writeDataset<T>(std::string_view, const Shape&, std::span<const T>);   \
  template Expected<Array<T>> Hdf5File::readDataset<T>(std::string_view) const;                    \
  template Expected<std::vector<T>> Hdf5File::readVector<T>(std::string_view) const;               \
  template Status Hdf5File::createExtendibleDataset<T>(std::string_view, const Shape&,             \
                                                       const ExtendibleOptions&);                  \
  template Status Hdf5File::appendRows<T>(std::string_view, std::span<const T>);                   \
  template Status Hdf5File::writeAttribute<T>(std::string_view, std::string_view, const T&);       \
  template Expected<T> Hdf5File::readAttribute<T>(std::string_view, std::string_view) const;

MLGO_HDF5_INSTANTIATE(double)
MLGO_HDF5_INSTANTIATE(int64_t)
MLGO_HDF5_INSTANTIATE(uint64_t)
MLGO_HDF5_INSTANTIATE(std::string)

#undef MLGO_HDF5_INSTANTIATE

} // namespace mlgo::results
