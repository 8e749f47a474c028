package io.agentmanager.client;

import io.agentmanager.client.wire.ClassifierValue;
import io.agentmanager.client.wire.PublishedClassifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A list of (code, label) values typed parameters pick from: static, or computed by a
 * provider at every publication (start-up and each reconnect). The provider is called on the
 * node's connection thread and must be thread-safe.
 */
public final class Classifier {
    private final String name;
    private final String title;
    private final List<ClassifierValue> values = new ArrayList<>();
    private final Supplier<List<ClassifierValue>> provider;

    private Classifier(String name, String title, Supplier<List<ClassifierValue>> provider) {
        this.name = Objects.requireNonNull(name, "name");
        this.title = Objects.requireNonNull(title, "title");
        this.provider = provider;
    }

    /**
     * A classifier with static values (add them with {@link #value}).
     *
     * @param name its name
     * @param title its title
     * @return the classifier
     */
    public static Classifier of(String name, String title) {
        return new Classifier(name, title, null);
    }

    /**
     * A classifier whose values a function computes at each publication.
     *
     * @param name its name
     * @param title its title
     * @param provider the values
     * @return the classifier
     */
    public static Classifier provider(String name, String title, Supplier<List<ClassifierValue>> provider) {
        return new Classifier(name, title, Objects.requireNonNull(provider, "provider"));
    }

    /**
     * Adds a static value.
     *
     * @param code the code
     * @param label the label
     * @return this
     */
    public Classifier value(String code, String label) {
        values.add(new ClassifierValue(code, label));
        return this;
    }

    /**
     * The name.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    PublishedClassifier publish() {
        List<ClassifierValue> all = new ArrayList<>(values);
        if (provider != null) {
            all.addAll(provider.get());
        }
        return new PublishedClassifier(name, title, all);
    }
}
