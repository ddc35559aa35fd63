#include "mlgo/results/Hdf5File.h"

#include "ResultsTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <thread>

namespace mlgo::results {
namespace {

using testing::messageOf;

class Hdf5FileTest : public testing::ScratchDirectoryTest {
protected:
  Hdf5File createFile(const std::string& name = "test.h5") {
    Expected<Hdf5File> file = Hdf5File::create(file_(name));
    EXPECT_TRUE(file) << messageOf(file);
    return file.take();
  }
  Hdf5File openFile(OpenMode mode, const std::string& name = "test.h5") {
    Expected<Hdf5File> file = Hdf5File::open(file_(name), mode);
    EXPECT_TRUE(file) << messageOf(file);
    return file.take();
  }
  std::filesystem::path file_(const std::string& name) const { return file(name); }
};

const std::vector<double> kDoubles = {0.0, -1.5, 3.25e300, std::numeric_limits<double>::infinity(),
                                      -0.0};
const std::vector<int64_t> kInt64s = {0, -1, std::numeric_limits<int64_t>::min(),
                                      std::numeric_limits<int64_t>::max(), 42};
const std::vector<uint64_t> kUInt64s = {0, 1, std::numeric_limits<uint64_t>::max(), 7};
const std::vector<std::string> kStrings = {"callee_users", "", "λ-ünïcödé", "a b\tc\n"};

TEST_F(Hdf5FileTest, OneDimensionalRoundTripOfEveryType) {
  {
    Hdf5File file = createFile();
    ASSERT_TRUE(file.writeDataset<double>("/d", kDoubles));
    ASSERT_TRUE(file.writeDataset<int64_t>("/i", kInt64s));
    ASSERT_TRUE(file.writeDataset<uint64_t>("/u", kUInt64s));
    ASSERT_TRUE(file.writeDataset<std::string>("/s", kStrings));
    ASSERT_TRUE(file.close());
  }
  Hdf5File file = openFile(OpenMode::ReadOnly);
  Expected<std::vector<double>> doubles = file.readVector<double>("/d");
  ASSERT_TRUE(doubles) << messageOf(doubles);
  ASSERT_EQ(doubles->size(), kDoubles.size());
  for (size_t i = 0; i < kDoubles.size(); ++i) {
    EXPECT_EQ((*doubles)[i], kDoubles[i]);
    EXPECT_EQ(std::signbit((*doubles)[i]), std::signbit(kDoubles[i]));
  }
  Expected<std::vector<int64_t>> ints = file.readVector<int64_t>("/i");
  ASSERT_TRUE(ints) << messageOf(ints);
  EXPECT_EQ(*ints, kInt64s);
  Expected<std::vector<uint64_t>> uints = file.readVector<uint64_t>("/u");
  ASSERT_TRUE(uints) << messageOf(uints);
  EXPECT_EQ(*uints, kUInt64s);
  Expected<std::vector<std::string>> strings = file.readVector<std::string>("/s");
  ASSERT_TRUE(strings) << messageOf(strings);
  EXPECT_EQ(*strings, kStrings);

  EXPECT_EQ(*file.datasetType("/d"), ElementType::Float64);
  EXPECT_EQ(*file.datasetType("/i"), ElementType::Int64);
  EXPECT_EQ(*file.datasetType("/u"), ElementType::UInt64);
  EXPECT_EQ(*file.datasetType("/s"), ElementType::String);
  EXPECT_EQ(*file.datasetShape("/s"), Shape{kStrings.size()});
}

TEST_F(Hdf5FileTest, TwoDimensionalRoundTripOfEveryType) {
  std::vector<double> doubles = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> ints = {-1, -2, -3, -4, -5, -6};
  std::vector<uint64_t> uints = {1, 2, 3, 4, 5, 6};
  std::vector<std::string> strings = {"a", "bb", "ccc", "dddd"};
  {
    Hdf5File file = createFile();
    ASSERT_TRUE(file.writeDataset<double>("/m/d", {2, 3}, doubles));
    ASSERT_TRUE(file.writeDataset<int64_t>("/m/i", {3, 2}, ints));
    ASSERT_TRUE(file.writeDataset<uint64_t>("/m/u", {1, 6}, uints));
    ASSERT_TRUE(file.writeDataset<std::string>("/m/s", {2, 2}, strings));
  }
  Hdf5File file = openFile(OpenMode::ReadOnly);
  Expected<Array<double>> d = file.readDataset<double>("/m/d");
  ASSERT_TRUE(d) << messageOf(d);
  EXPECT_EQ(d->shape, (Shape{2, 3}));
  EXPECT_EQ(d->values, doubles);
  Expected<Array<int64_t>> i = file.readDataset<int64_t>("/m/i");
  ASSERT_TRUE(i) << messageOf(i);
  EXPECT_EQ(i->shape, (Shape{3, 2}));
  EXPECT_EQ(i->values, ints);
  Expected<Array<uint64_t>> u = file.readDataset<uint64_t>("/m/u");
  ASSERT_TRUE(u) << messageOf(u);
  EXPECT_EQ(u->shape, (Shape{1, 6}));
  EXPECT_EQ(u->values, uints);
  Expected<Array<std::string>> s = file.readDataset<std::string>("/m/s");
  ASSERT_TRUE(s) << messageOf(s);
  EXPECT_EQ(s->shape, (Shape{2, 2}));
  EXPECT_EQ(s->values, strings);

  Expected<std::vector<double>> notAVector = file.readVector<double>("/m/d");
  ASSERT_FALSE(notAVector);
  EXPECT_EQ(notAVector.error().message,
            file_("test.h5").string() + ": /m/d: expected a 1-D dataset, found shape [2, 3]");
}

TEST_F(Hdf5FileTest, EmptyDatasets) {
  {
    Hdf5File file = createFile();
    ASSERT_TRUE(file.writeDataset<double>("/empty", std::vector<double>{}));
    ASSERT_TRUE(file.writeDataset<std::string>("/rows", {0, 3}, std::vector<std::string>{}));
  }
  Hdf5File file = openFile(OpenMode::ReadOnly);
  Expected<Array<double>> empty = file.readDataset<double>("/empty");
  ASSERT_TRUE(empty) << messageOf(empty);
  EXPECT_EQ(empty->shape, Shape{0});
  EXPECT_TRUE(empty->values.empty());
  Expected<Array<std::string>> rows = file.readDataset<std::string>("/rows");
  ASSERT_TRUE(rows) << messageOf(rows);
  EXPECT_EQ(rows->shape, (Shape{0, 3}));
}

TEST_F(Hdf5FileTest, WriteErrorsNameFileAndPath) {
  Hdf5File file = createFile();
  std::string prefix = file_("test.h5").string() + ": ";
  Status wrongShape = file.writeDataset<double>("/x", {2, 2}, std::vector<double>{1, 2, 3});
  ASSERT_FALSE(wrongShape);
  EXPECT_EQ(wrongShape.error().message, prefix + "/x: shape [2, 2] holds 4 values, got 3");

  ASSERT_TRUE(file.writeDataset<double>("/x", std::vector<double>{1}));
  Status twice = file.writeDataset<double>("/x", std::vector<double>{1});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().message, prefix + "/x: already exists");

  Status nul = file.writeDataset<std::string>("/s", std::vector<std::string>{"ok", {"a\0b", 3}});
  ASSERT_FALSE(nul);
  EXPECT_EQ(nul.error().message,
            prefix + "/s: string 1 contains a NUL character, which HDF5 strings cannot hold");

  Status relative = file.writeDataset<double>("x", std::vector<double>{1});
  ASSERT_FALSE(relative);
  EXPECT_EQ(relative.error().message, prefix + "x: object paths must be absolute (start with '/')");

  Status underDataset = file.writeDataset<double>("/x/y", std::vector<double>{1});
  ASSERT_FALSE(underDataset);
  EXPECT_NE(underDataset.error().message.find(prefix + "/x/y: cannot create dataset ("),
            std::string::npos)
      << underDataset.error().message;
}

TEST_F(Hdf5FileTest, ReadErrorsNameFileAndPath) {
  {
    Hdf5File file = createFile();
    ASSERT_TRUE(file.writeDataset<double>("/steps/loss", std::vector<double>{1, 2}));
    ASSERT_TRUE(file.writeDataset<uint64_t>("/steps/size", std::vector<uint64_t>{1, 2}));
  }
  Hdf5File file = openFile(OpenMode::ReadOnly);
  std::string prefix = file_("test.h5").string() + ": ";

  Expected<std::vector<double>> missing = file.readVector<double>("/steps/reward");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, prefix + "/steps/reward: no such dataset");
  Expected<std::vector<double>> missingParent = file.readVector<double>("/nothing/here");
  ASSERT_FALSE(missingParent);
  EXPECT_EQ(missingParent.error().message, prefix + "/nothing/here: no such dataset");
  Expected<std::vector<double>> group = file.readVector<double>("/steps");
  ASSERT_FALSE(group);
  EXPECT_EQ(group.error().message, prefix + "/steps: is a group, not a dataset");

  Expected<std::vector<int64_t>> floatsAsInts = file.readVector<int64_t>("/steps/loss");
  ASSERT_FALSE(floatsAsInts);
  EXPECT_EQ(floatsAsInts.error().message, prefix + "/steps/loss: holds float64 values, not int64");
  Expected<std::vector<int64_t>> unsignedAsSigned = file.readVector<int64_t>("/steps/size");
  ASSERT_FALSE(unsignedAsSigned);
  EXPECT_EQ(unsignedAsSigned.error().message,
            prefix + "/steps/size: holds uint64 values, not int64");
  Expected<std::vector<std::string>> numbersAsStrings = file.readVector<std::string>("/steps/size");
  ASSERT_FALSE(numbersAsStrings);

  Status readOnly = file.createGroup("/new");
  ASSERT_FALSE(readOnly);
  EXPECT_EQ(readOnly.error().message, prefix + "/new: file is open read-only");
}

TEST_F(Hdf5FileTest, OpenErrorsNameTheFile) {
  std::filesystem::path missing = file_("missing.h5");
  Expected<Hdf5File> absent = Hdf5File::open(missing, OpenMode::ReadOnly);
  ASSERT_FALSE(absent);
  EXPECT_EQ(absent.error().message, missing.string() + ": no such file");

  std::filesystem::path text = file_("notes.txt");
  std::ofstream(text) << "not HDF5 at all\n";
  Expected<Hdf5File> notHdf5 = Hdf5File::open(text, OpenMode::ReadOnly);
  ASSERT_FALSE(notHdf5);
  EXPECT_EQ(notHdf5.error().message, text.string() + ": not an HDF5 file");

  Expected<Hdf5File> directory = Hdf5File::open(directory_, OpenMode::ReadOnly);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().message, directory_.string() + ": is a directory, not an HDF5 file");

  std::filesystem::path noParent = directory_ / "no" / "such" / "dir.h5";
  Expected<Hdf5File> created = Hdf5File::create(noParent);
  ASSERT_FALSE(created);
  EXPECT_EQ(created.error().message,
            noParent.string() + ": cannot create: no directory " + noParent.parent_path().string());
}

TEST_F(Hdf5FileTest, GroupsAndListings) {
  Hdf5File file = createFile();
  ASSERT_TRUE(file.createGroup("/a/b/c")); // parents made on the way
  ASSERT_TRUE(file.createGroup("/a/b"));   // existing: fine
  ASSERT_TRUE(file.writeDataset<double>("/a/z", std::vector<double>{1}));
  ASSERT_TRUE(file.writeDataset<double>("/deep/er/d", std::vector<double>{1}));
  ASSERT_TRUE(file.createGroup("/a/0"));

  EXPECT_EQ(file.objectKind("/"), ObjectKind::Group);
  EXPECT_EQ(file.objectKind("/a/b/c"), ObjectKind::Group);
  EXPECT_EQ(file.objectKind("/a/z"), ObjectKind::Dataset);
  EXPECT_EQ(file.objectKind("/deep/er"), ObjectKind::Group);
  EXPECT_EQ(file.objectKind("/a/q"), std::nullopt);
  EXPECT_EQ(file.objectKind("/a/z/under-a-dataset"), std::nullopt);
  EXPECT_EQ(file.objectKind("relative"), std::nullopt);
  EXPECT_TRUE(file.exists("/deep/er/d"));

  Expected<std::vector<std::string>> root = file.children("/");
  ASSERT_TRUE(root) << messageOf(root);
  EXPECT_EQ(*root, (std::vector<std::string>{"a", "deep"}));
  Expected<std::vector<std::string>> a = file.children("/a");
  ASSERT_TRUE(a) << messageOf(a);
  EXPECT_EQ(*a, (std::vector<std::string>{"0", "b", "z"}));

  std::string prefix = file_("test.h5").string() + ": ";
  Expected<std::vector<std::string>> ofDataset = file.children("/a/z");
  ASSERT_FALSE(ofDataset);
  EXPECT_EQ(ofDataset.error().message, prefix + "/a/z: is a dataset, not a group");
  Expected<std::vector<std::string>> ofNothing = file.children("/nope");
  ASSERT_FALSE(ofNothing);
  EXPECT_EQ(ofNothing.error().message, prefix + "/nope: no such group");
  Status overDataset = file.createGroup("/a/z");
  ASSERT_FALSE(overDataset);
  EXPECT_EQ(overDataset.error().message, prefix + "/a/z: exists and is a dataset, not a group");
}

TEST_F(Hdf5FileTest, AppendRowsOverSeveralCallsAndReopens) {
  {
    Hdf5File file = createFile();
    ExtendibleOptions smallChunks;
    smallChunks.chunkRows = 2; // several chunks even for a few rows
    ASSERT_TRUE(file.createExtendibleDataset<double>("/steps/reward", {}, smallChunks));
    ASSERT_TRUE(file.createExtendibleDataset<int64_t>("/steps/sizes", {3}, smallChunks));
    ExtendibleOptions compressed;
    compressed.deflateLevel = 6;
    ASSERT_TRUE(file.createExtendibleDataset<std::string>("/steps/note", {}, compressed));
    ASSERT_TRUE(file.createExtendibleDataset<uint64_t>("/steps/hash", {2}));
    EXPECT_EQ(*file.datasetShape("/steps/sizes"), (Shape{0, 3}));

    // One row per training step, as issue 4's run files do.
    for (int step = 0; step < 5; ++step) {
      double reward = 0.5 * step;
      ASSERT_TRUE(file.appendRows<double>("/steps/reward", std::span(&reward, 1)));
      std::vector<int64_t> sizes = {step, step * 10, -step};
      ASSERT_TRUE(file.appendRows<int64_t>("/steps/sizes", sizes));
      std::string note = "step " + std::to_string(step);
      ASSERT_TRUE(file.appendRows<std::string>("/steps/note", std::span(&note, 1)));
    }
    // Several rows at once, and nothing at all.
    ASSERT_TRUE(file.appendRows<uint64_t>("/steps/hash", std::vector<uint64_t>{1, 2, 3, 4}));
    ASSERT_TRUE(file.appendRows<uint64_t>("/steps/hash", std::vector<uint64_t>{}));
    ASSERT_TRUE(file.flush());
  }
  {
    Hdf5File file = openFile(OpenMode::ReadWrite);
    ASSERT_TRUE(file.appendRows<double>("/steps/reward", std::vector<double>{10, 11}));
    ASSERT_TRUE(file.appendRows<uint64_t>("/steps/hash", std::vector<uint64_t>{UINT64_MAX, 6}));
  }
  Hdf5File file = openFile(OpenMode::ReadOnly);
  Expected<std::vector<double>> rewards = file.readVector<double>("/steps/reward");
  ASSERT_TRUE(rewards) << messageOf(rewards);
  EXPECT_EQ(*rewards, (std::vector<double>{0, 0.5, 1, 1.5, 2, 10, 11}));
  Expected<Array<int64_t>> sizes = file.readDataset<int64_t>("/steps/sizes");
  ASSERT_TRUE(sizes) << messageOf(sizes);
  EXPECT_EQ(sizes->shape, (Shape{5, 3}));
  EXPECT_EQ(sizes->values,
            (std::vector<int64_t>{0, 0, 0, 1, 10, -1, 2, 20, -2, 3, 30, -3, 4, 40, -4}));
  Expected<std::vector<std::string>> notes = file.readVector<std::string>("/steps/note");
  ASSERT_TRUE(notes) << messageOf(notes);
  EXPECT_EQ(*notes, (std::vector<std::string>{"step 0", "step 1", "step 2", "step 3", "step 4"}));
  Expected<Array<uint64_t>> hashes = file.readDataset<uint64_t>("/steps/hash");
  ASSERT_TRUE(hashes) << messageOf(hashes);
  EXPECT_EQ(hashes->shape, (Shape{3, 2}));
  EXPECT_EQ(hashes->values, (std::vector<uint64_t>{1, 2, 3, 4, UINT64_MAX, 6}));
}

TEST_F(Hdf5FileTest, AppendRowsErrors) {
  Hdf5File file = createFile();
  std::string prefix = file_("test.h5").string() + ": ";
  ASSERT_TRUE(file.createExtendibleDataset<double>("/rows", {3}));
  ASSERT_TRUE(file.writeDataset<double>("/fixed", std::vector<double>{1}));

  Status partial = file.appendRows<double>("/rows", std::vector<double>{1, 2, 3, 4});
  ASSERT_FALSE(partial);
  EXPECT_EQ(partial.error().message, prefix + "/rows: 4 values are not whole rows of 3");
  Status fixed = file.appendRows<double>("/fixed", std::vector<double>{1});
  ASSERT_FALSE(fixed);
  EXPECT_EQ(fixed.error().message,
            prefix + "/fixed: is not extendible (create it with createExtendibleDataset)");
  Status wrongType = file.appendRows<int64_t>("/rows", std::vector<int64_t>{1, 2, 3});
  ASSERT_FALSE(wrongType);
  EXPECT_EQ(wrongType.error().message, prefix + "/rows: holds float64 values, not int64");
  Status missing = file.appendRows<double>("/steps/reward", std::vector<double>{1});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, prefix + "/steps/reward: no such dataset");
  EXPECT_EQ(*file.datasetShape("/rows"), (Shape{0, 3})); // nothing half-written

  Status emptyRow = file.createExtendibleDataset<double>("/bad", {0});
  ASSERT_FALSE(emptyRow);
  EXPECT_EQ(emptyRow.error().message, prefix + "/bad: row shape [0] has an empty dimension");
  ExtendibleOptions badOptions;
  badOptions.chunkRows = 0;
  Status badChunk = file.createExtendibleDataset<double>("/bad", {}, badOptions);
  ASSERT_FALSE(badChunk);
  EXPECT_EQ(badChunk.error().message, prefix + "/bad: chunkRows: must be at least 1 (got 0)");
}

TEST(ExtendibleOptions, ValidateNamesTheBadField) {
  EXPECT_TRUE(ExtendibleOptions{}.validate());
  ExtendibleOptions options;
  options.deflateLevel = 10;
  ASSERT_FALSE(options.validate());
  EXPECT_EQ(options.validate().error().message, "deflateLevel: must be 0 to 9 (got 10)");
}

TEST_F(Hdf5FileTest, AttributesOnFileGroupsAndDatasets) {
  {
    Hdf5File file = createFile();
    ASSERT_TRUE(file.createGroup("/g"));
    ASSERT_TRUE(file.writeDataset<double>("/g/d", std::vector<double>{1}));
    ASSERT_TRUE(file.writeAttribute("/", "format", "mlgo-run"));
    ASSERT_TRUE(file.writeAttribute<int64_t>("/", "version", 3));
    ASSERT_TRUE(file.writeAttribute<double>("/g", "sigma", 0.125));
    ASSERT_TRUE(file.writeAttribute<uint64_t>("/g/d", "seed", UINT64_MAX));
    ASSERT_TRUE(file.writeAttribute("/g/d", "units", std::string("bytes")));
    // Replacing changes the value and may change the type.
    ASSERT_TRUE(file.writeAttribute<double>("/", "version", 4.5));
    ASSERT_TRUE(file.writeAttribute<int64_t>("/", "version", 4));
  }
  Hdf5File file = openFile(OpenMode::ReadOnly);
  EXPECT_EQ(*file.readAttribute<std::string>("/", "format"), "mlgo-run");
  EXPECT_EQ(*file.readAttribute<int64_t>("/", "version"), 4);
  EXPECT_EQ(*file.readAttribute<double>("/g", "sigma"), 0.125);
  EXPECT_EQ(*file.readAttribute<uint64_t>("/g/d", "seed"), UINT64_MAX);
  EXPECT_EQ(*file.readAttribute<std::string>("/g/d", "units"), "bytes");
  EXPECT_EQ(*file.attributeType("/", "format"), ElementType::String);
  EXPECT_EQ(*file.attributeType("/", "version"), ElementType::Int64);
  EXPECT_EQ(*file.attributeType("/g/d", "seed"), ElementType::UInt64);
  EXPECT_TRUE(*file.hasAttribute("/", "format"));
  EXPECT_FALSE(*file.hasAttribute("/g", "format"));
  Expected<std::vector<std::string>> names = file.attributeNames("/g/d");
  ASSERT_TRUE(names) << messageOf(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"seed", "units"}));

  std::string prefix = file_("test.h5").string() + ": ";
  Expected<std::string> missing = file.readAttribute<std::string>("/g", "format");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, prefix + "/g: attribute \"format\": no such attribute");
  Expected<int64_t> wrongType = file.readAttribute<int64_t>("/", "format");
  ASSERT_FALSE(wrongType);
  EXPECT_EQ(wrongType.error().message,
            prefix + "/: attribute \"format\": holds string values, not int64");
  Expected<bool> onNothing = file.hasAttribute("/nope", "x");
  ASSERT_FALSE(onNothing);
  EXPECT_EQ(onNothing.error().message, prefix + "/nope: no such object");
}

TEST_F(Hdf5FileTest, ClosedAndMovedFiles) {
  Hdf5File file = createFile();
  ASSERT_TRUE(file.writeDataset<double>("/x", std::vector<double>{1, 2}));
  Hdf5File moved = std::move(file);
  EXPECT_TRUE(moved.isOpen());
  EXPECT_TRUE(moved.writable());
  EXPECT_TRUE(moved.writeDataset<double>("/y", std::vector<double>{3}));
  ASSERT_TRUE(moved.close());
  EXPECT_TRUE(moved.close()); // closing twice is fine
  Expected<std::vector<double>> afterClose = moved.readVector<double>("/x");
  ASSERT_FALSE(afterClose);
  EXPECT_EQ(afterClose.error().message, file_("test.h5").string() + ": /x: file is closed");

  Hdf5File reopened = openFile(OpenMode::ReadOnly);
  EXPECT_EQ(*reopened.readVector<double>("/y"), std::vector<double>{3});
}

// Calls are serialised by the wrapper's mutex, so threads may each drive a
// file (Debian's HDF5 is not thread-safe by itself).
TEST_F(Hdf5FileTest, ThreadsEachWithTheirOwnFile) {
  constexpr int kThreads = 4;
  constexpr int kRows = 200;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(kThreads);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      Expected<Hdf5File> file = Hdf5File::create(file_("thread" + std::to_string(t) + ".h5"));
      if (!file) {
        errors[t] = file.error().message;
        return;
      }
      if (Status created = file->createExtendibleDataset<int64_t>("/rows", {2}); !created) {
        errors[t] = created.error().message;
        return;
      }
      for (int64_t row = 0; row < kRows; ++row) {
        std::vector<int64_t> values = {t, row};
        if (Status appended = file->appendRows<int64_t>("/rows", values); !appended) {
          errors[t] = appended.error().message;
          return;
        }
      }
    });
  for (std::thread& thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(errors[t], "") << "thread " << t;
    Hdf5File file = openFile(OpenMode::ReadOnly, "thread" + std::to_string(t) + ".h5");
    Expected<Array<int64_t>> rows = file.readDataset<int64_t>("/rows");
    ASSERT_TRUE(rows) << messageOf(rows);
    ASSERT_EQ(rows->shape, (Shape{kRows, 2}));
    for (int64_t row = 0; row < kRows; ++row) {
      EXPECT_EQ(rows->values[2 * row], t);
      EXPECT_EQ(rows->values[2 * row + 1], row);
    }
  }
}

} // namespace
} // namespace mlgo::results
